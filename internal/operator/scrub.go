package operator

import (
	"reflect"

	"github.com/coagent8/coagent8/internal/redact"
)

// scrub redacts, in place and with the diagnostic profile, every string
// reachable from the page data p points to: struct fields, slice and
// array elements, map keys and values, pointers and interfaces. It runs
// on every page's data before the template, so no value reaches the page
// unredacted whichever field it sits in (issue 17 scope 4).
func scrub(red *redact.Redactor, p any) {
	scrubValue(red, reflect.ValueOf(p).Elem())
}

func scrubValue(red *redact.Redactor, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(red.String(v.String()))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			scrubElem(red, v)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				scrubValue(red, f)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			scrubValue(red, v.Index(i))
		}
	case reflect.Map:
		scrubMap(red, v)
	}
}

// scrubElem handles a pointer or interface: a pointer's target is
// addressable; an interface's dynamic value is copied, scrubbed and put
// back.
func scrubElem(red *redact.Redactor, v reflect.Value) {
	if v.Kind() == reflect.Pointer {
		scrubValue(red, v.Elem())
		return
	}
	if !v.CanSet() {
		return
	}
	c := reflect.New(v.Elem().Type()).Elem()
	c.Set(v.Elem())
	scrubValue(red, c)
	v.Set(c)
}

// scrubMap rebuilds a map with scrubbed keys and values.
func scrubMap(red *redact.Redactor, v reflect.Value) {
	if v.IsNil() || !v.CanSet() {
		return
	}
	out := reflect.MakeMapWithSize(v.Type(), v.Len())
	it := v.MapRange()
	for it.Next() {
		k := reflect.New(v.Type().Key()).Elem()
		k.Set(it.Key())
		e := reflect.New(v.Type().Elem()).Elem()
		e.Set(it.Value())
		scrubValue(red, k)
		scrubValue(red, e)
		out.SetMapIndex(k, e)
	}
	v.Set(out)
}
