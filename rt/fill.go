package rt

import "reflect"

// FillEmpty returns v, a slice or map whose elements are slices or maps,
// with every nil container nested in it replaced by an empty one, so that
// it marshals [] or {} instead of null. nullable[d] tells whether the
// containers at depth d+1 (the elements of v are depth 1) may be null:
// those stay nil. v itself is not changed: a container that needs a
// change is copied. A nil v is returned as it is (its own emptiness is
// the caller's).
//
// Generated MarshalJSON methods call it for fields such as
// map[string][]T, whose schemas forbid null at every level.
func FillEmpty[T any](v T, nullable ...bool) T {
	out, changed := fillValue(reflect.ValueOf(v), nullable)
	if !changed {
		return v
	}
	return out.Interface().(T)
}

// fillValue fills the elements of container v (a slice or map) as
// FillEmpty says, copying v if an element changes.
func fillValue(v reflect.Value, nullable []bool) (reflect.Value, bool) {
	if len(nullable) == 0 {
		return v, false
	}
	switch v.Kind() {
	case reflect.Slice:
		var out reflect.Value
		for i := range v.Len() {
			e, changed := fillElem(v.Index(i), nullable)
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
				reflect.Copy(out, v)
			}
			out.Index(i).Set(e)
		}
		return out, out.IsValid()
	case reflect.Map:
		var out reflect.Value
		for it := v.MapRange(); it.Next(); {
			e, changed := fillElem(it.Value(), nullable)
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.MakeMapWithSize(v.Type(), v.Len())
				for c := v.MapRange(); c.Next(); {
					out.SetMapIndex(c.Key(), c.Value())
				}
			}
			out.SetMapIndex(it.Key(), e)
		}
		return out, out.IsValid()
	}
	return v, false
}

// fillElem fills one element at the depth nullable[0] describes.
func fillElem(e reflect.Value, nullable []bool) (reflect.Value, bool) {
	switch e.Kind() {
	case reflect.Slice, reflect.Map:
	default:
		return e, false
	}
	if e.IsNil() {
		if nullable[0] {
			return e, false
		}
		if e.Kind() == reflect.Slice {
			return reflect.MakeSlice(e.Type(), 0, 0), true
		}
		return reflect.MakeMap(e.Type()), true
	}
	return fillValue(e, nullable[1:])
}
