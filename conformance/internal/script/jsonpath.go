package script

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
)

// lookup finds the value at path in v (decoded JSON). path is "." for the
// whole value, a JSON pointer ("/attempt/task_id"), or a dotted path whose
// segments are object keys, array indexes, or selectors that pick the array
// element whose field equals a value ("agents[agent_id=maya/builder].model").
// found is false when the path names nothing.
func lookup(v any, path string) (val any, found bool, err error) {
	segs, err := splitPath(path)
	if err != nil {
		return nil, false, err
	}
	cur := v
	for _, s := range segs {
		switch {
		case s.selKey != "":
			arr, ok := cur.([]any)
			if !ok {
				return nil, false, nil
			}
			var hit any
			n := 0
			for _, el := range arr {
				if obj, ok := el.(map[string]any); ok {
					if f, ok := obj[s.selKey]; ok && scalarString(f) == s.selVal {
						hit = el
						n++
					}
				}
			}
			if n == 0 {
				return nil, false, nil
			}
			if n > 1 {
				return nil, false, fmt.Errorf("selector [%s=%s] matches %d elements", s.selKey, s.selVal, n)
			}
			cur = hit
		default:
			switch c := cur.(type) {
			case map[string]any:
				next, ok := c[s.key]
				if !ok {
					return nil, false, nil
				}
				cur = next
			case []any:
				i, err := strconv.Atoi(s.key)
				if err != nil || i < 0 || i >= len(c) {
					return nil, false, nil
				}
				cur = c[i]
			default:
				return nil, false, nil
			}
		}
	}
	return cur, true, nil
}

type pathSeg struct {
	key            string
	selKey, selVal string
}

func splitPath(path string) ([]pathSeg, error) {
	if path == "" {
		return nil, fmt.Errorf("empty path (use . for the whole value)")
	}
	if path == "." {
		return nil, nil
	}
	if strings.HasPrefix(path, "/") {
		toks, err := jsonpointer.Split(path)
		if err != nil {
			return nil, err
		}
		segs := make([]pathSeg, len(toks))
		for i, tok := range toks {
			segs[i] = pathSeg{key: tok}
		}
		return segs, nil
	}
	var segs []pathSeg
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			segs = append(segs, pathSeg{key: cur.String()})
			cur.Reset()
		}
	}
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '.':
			flush()
		case '[':
			flush()
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: unclosed [", path)
			}
			sel := path[i+1 : i+end]
			i += end
			k, v, ok := strings.Cut(sel, "=")
			if !ok {
				segs = append(segs, pathSeg{key: sel}) // [3]
				continue
			}
			if k == "" {
				return nil, fmt.Errorf("path %q: empty selector key", path)
			}
			segs = append(segs, pathSeg{selKey: k, selVal: v})
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return segs, nil
}

// scalarString renders a scalar the way a script writes it: strings bare,
// everything else as JSON.
func scalarString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return wire.Compact(v)
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
