package gen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"text/template"

	"github.com/prickle-dev/prickle/spec"
)

// wireShapesPage puts a struct with a MarshalJSON (leaf: its tags are
// required) in every container a wire form converts, and in some it does
// not (rt.Nullable, an array of arrays). Its fences are written ~~~.
var wireShapesPage = strings.ReplaceAll(`# Wire shapes

Pages that exercise the wire forms. Identity comes from the token.

## wire_shapes

Return objects in every container the wire forms convert.

### Example input

~~~json
{
  "id": "x"
}
~~~

### Input schema

~~~json
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "id": {
      "type": "string"
    }
  },
  "required": [
    "id"
  ]
}
~~~

### Output schema

~~~json
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "one": {
      "$ref": "#/$defs/leaf"
    },
    "opt": {
      "$ref": "#/$defs/leaf"
    },
    "maybe": {
      "anyOf": [
        {
          "$ref": "#/$defs/leaf"
        },
        {
          "type": "null"
        }
      ]
    },
    "either": {
      "anyOf": [
        {
          "$ref": "#/$defs/leaf"
        },
        {
          "type": "null"
        }
      ]
    },
    "list": {
      "type": "array",
      "items": {
        "$ref": "#/$defs/leaf"
      }
    },
    "opt_list": {
      "type": "array",
      "items": {
        "$ref": "#/$defs/leaf"
      }
    },
    "null_list": {
      "anyOf": [
        {
          "type": "array",
          "items": {
            "$ref": "#/$defs/leaf"
          }
        },
        {
          "type": "null"
        }
      ]
    },
    "holes": {
      "type": "array",
      "items": {
        "anyOf": [
          {
            "$ref": "#/$defs/leaf"
          },
          {
            "type": "null"
          }
        ]
      }
    },
    "by_name": {
      "type": "object",
      "additionalProperties": {
        "$ref": "#/$defs/leaf"
      }
    },
    "opt_by_name": {
      "type": "object",
      "additionalProperties": {
        "$ref": "#/$defs/leaf"
      }
    },
    "holes_by_name": {
      "type": "object",
      "additionalProperties": {
        "anyOf": [
          {
            "$ref": "#/$defs/leaf"
          },
          {
            "type": "null"
          }
        ]
      }
    },
    "grid": {
      "type": "array",
      "items": {
        "type": "array",
        "items": {
          "$ref": "#/$defs/leaf"
        }
      }
    },
    "tree": {
      "$ref": "#/$defs/node"
    }
  },
  "required": [
    "one",
    "maybe",
    "list",
    "null_list",
    "holes",
    "by_name",
    "holes_by_name",
    "grid",
    "tree"
  ],
  "additionalProperties": false,
  "$defs": {
    "leaf": {
      "type": "object",
      "properties": {
        "name": {
          "type": "string"
        },
        "tags": {
          "type": "array",
          "items": {
            "type": "string"
          }
        }
      },
      "required": [
        "name",
        "tags"
      ],
      "additionalProperties": false
    },
    "node": {
      "type": "object",
      "properties": {
        "label": {
          "type": "string"
        },
        "children": {
          "type": "array",
          "items": {
            "$ref": "#/$defs/node"
          }
        }
      },
      "required": [
        "label",
        "children"
      ],
      "additionalProperties": false
    }
  }
}
~~~

[Read online](https://example.com/docs/tools?tool=wire_shapes)
`, "~~~", "```")

// wireShapesCases are outputs of wire_shapes as JSON, and the JSON that
// json.Marshal writes for them: required arrays and maps [] / {} when nil
// (nested ones too), nullable ones null, optional ones omitted when nil and
// kept when empty.
var wireShapesCases = []struct{ In, Want string }{
	{`{}`, `{"one":{"name":"","tags":[]},"maybe":null,"list":[],"null_list":null,"holes":[],"by_name":{},"holes_by_name":{},"grid":[],"tree":{"label":"","children":[]}}`},
	{
		`{"one":{"name":"a"},"opt":{"name":"b","tags":["t"]},"maybe":{"name":"c"},"either":null,"list":[{"name":"d"}],"opt_list":[],"null_list":[],` +
			`"holes":[null,{"name":"e"}],"by_name":{"z":{"name":"f"},"y":{"name":"g","tags":[]}},"opt_by_name":{},"holes_by_name":{"n":null,"m":{"name":"h"}},` +
			`"grid":[[{"name":"i"}],[]],"tree":{"label":"r","children":[{"label":"s"},{"label":"t","children":[{"label":"u"}]}]}}`,
		`{"one":{"name":"a","tags":[]},"opt":{"name":"b","tags":["t"]},"maybe":{"name":"c","tags":[]},"either":null,"list":[{"name":"d","tags":[]}],"opt_list":[],"null_list":[],` +
			`"holes":[null,{"name":"e","tags":[]}],"by_name":{"y":{"name":"g","tags":[]},"z":{"name":"f","tags":[]}},"opt_by_name":{},"holes_by_name":{"m":{"name":"h","tags":[]},"n":null},` +
			`"grid":[[{"name":"i","tags":[]}],[]],"tree":{"label":"r","children":[{"label":"s","children":[]},{"label":"t","children":[{"label":"u","children":[]}]}]}}`,
	},
	// A nil array nested in grid (decoded from null here; a handler may
	// leave one nil) marshals [], as the schema requires.
	{
		`{"grid":[null,[{"name":"i"}]]}`,
		`{"one":{"name":"","tags":[]},"maybe":null,"list":[],"null_list":null,"holes":[],"by_name":{},"holes_by_name":{},"grid":[[],[{"name":"i","tags":[]}]],"tree":{"label":"","children":[]}}`,
	},
	{
		`{"either":{"name":"x"},"opt_by_name":{"k":{"name":"y"}},"null_list":null,"grid":null}`,
		`{"one":{"name":"","tags":[]},"maybe":null,"either":{"name":"x","tags":[]},"list":[],"null_list":null,"holes":[],"by_name":{},"opt_by_name":{"k":{"name":"y","tags":[]}},"holes_by_name":{},"grid":[],"tree":{"label":"","children":[]}}`,
	},
}

// TestWireForms generates the wire_shapes page, every corpus case and the
// bundled pages into one temporary module and checks there that the wire
// form of an output (what rt.Handle marshals) writes the JSON its own
// MarshalJSON writes, for the wire_shapes cases and every valid output of
// the round-trip fixtures, and that rt.MarshalJSON writes <, > and & as
// they are.
func TestWireForms(t *testing.T) {
	goBin, tmp, write := tempModule(t, "wire")

	shapes, _, err := spec.LoadLinted([]spec.Source{{File: "wire_shapes.md", Src: []byte(wireShapesPage)}})
	if err != nil {
		t.Fatal(err)
	}
	pkgs := append([]corpusPkg{{"shapes", shapes, nil}}, corpusPackages(t)...) // shapes: no round-trip fixtures
	cases, err := json.Marshal(wireShapesCases)
	if err != nil {
		t.Fatal(err)
	}

	wired := 0
	for _, p := range pkgs {
		m, err := build(p.s, Options{Package: p.name})
		if err != nil {
			t.Fatal(err)
		}
		files, _, err := m.goFiles()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			write(p.name+"/"+f.Path, f.Data)
		}
		var tools []map[string]string
		for _, tm := range m.tools {
			if tm.out.root.wireName != "" {
				tools = append(tools, map[string]string{"Name": tm.t.Name, "Go": tm.goName})
			}
		}
		wired += len(tools)
		var b bytes.Buffer
		if err := wireTmpl.Execute(&b, map[string]any{"Pkg": p.name, "Tools": tools, "Shapes": p.fix == nil}); err != nil {
			t.Fatal(err)
		}
		write(p.name+"/wire_test.go", b.Bytes())
		if p.fix != nil {
			write(p.name+"/testdata/roundtrip.json", p.fix)
		} else {
			write(p.name+"/testdata/cases.json", cases)
		}
	}
	if wired < 8 {
		t.Fatalf("%d tools have an output with a wire form, want at least 8", wired)
	}

	goTestModule(t, goBin, tmp, "wire", pkgs)
}

var wireTmpl = template.Must(template.New("wire").Parse(`package {{.Pkg}}

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/rt"
)

// marshalers marshal an output given as JSON three ways: json.Marshal of
// the output (its own MarshalJSON), json.Marshal of its wire form, and
// rt.MarshalJSON of its wire form (what rt.Handle sends).
var marshalers = map[string]func(t *testing.T, raw []byte) (own, wire, sent []byte){
{{- range .Tools}}
	{{printf "%q" .Name}}: func(t *testing.T, raw []byte) (own, wire, sent []byte) {
		var v {{.Go}}Output
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("unmarshal %s: %v", raw, err)
		}
		return marshalAll(t, v, v.wire())
	},
{{- end}}
}

func marshalAll(t *testing.T, v, w any) (own, wire, sent []byte) {
	t.Helper()
	var err error
	if own, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	if wire, err = json.Marshal(w); err != nil {
		t.Fatal(err)
	}
	if sent, err = rt.MarshalJSON(w); err != nil {
		t.Fatal(err)
	}
	return own, wire, sent
}

// unescaped undoes encoding/json's HTML escaping.
func unescaped(b []byte) []byte {
	return []byte(strings.NewReplacer("\\u003c", "<", "\\u003e", ">", "\\u0026", "&").Replace(string(b)))
}
{{if .Shapes}}
func TestWireShapes(t *testing.T) {
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ In, Want string }
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		own, wire, sent := marshalers["wire_shapes"](t, []byte(c.In))
		if string(own) != c.Want || string(wire) != c.Want || string(sent) != c.Want {
			t.Errorf("%s:\n own %s\nwire %s\nsent %s\nwant %s", c.In, own, wire, sent, c.Want)
		}
	}
	own, wire, sent := marshalers["wire_shapes"](t, []byte("{\"one\":{\"name\":\"<a&b>\"}}"))
	if !bytes.Contains(own, []byte("\\u003ca\\u0026b\\u003e")) || !bytes.Equal(own, wire) || !bytes.Contains(sent, []byte("<a&b>")) {
		t.Errorf("HTML escaping:\n own %s\nwire %s\nsent %s", own, wire, sent)
	}
}
{{else}}
func TestWireRoundTrip(t *testing.T) {
	b, err := os.ReadFile("testdata/roundtrip.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx map[string]map[string]struct {
		Valid []json.RawMessage
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	for name, m := range marshalers {
		if len(fx[name]["output"].Valid) == 0 {
			t.Errorf("%s: no valid outputs in the fixture", name)
		}
		for i, raw := range fx[name]["output"].Valid {
			own, wire, sent := m(t, raw)
			if !bytes.Equal(own, wire) || !bytes.Equal(unescaped(own), sent) {
				t.Errorf("%s output valid[%d]:\n own %s\nwire %s\nsent %s", name, i, own, wire, sent)
			}
		}
	}
}
{{end}}`))
