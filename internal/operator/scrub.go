package operator

import (
	"reflect"

	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/redact"
)

// scrub redacts, with the diagnostic profile, every string reachable from
// the page data p points to: struct fields, slice and array elements, map
// keys and values, pointers and interfaces, and escapes its controls
// ([quarantine.Visible]: a bidi override in a file name or a reason would
// reorder what the operator reads, a control byte is not text). It runs
// on every page's data before the template, so no value reaches the page
// unredacted or with a raw control whichever field it sits in (issue 17
// scope 4).
//
// A [patchText] (a line of a candidate's patch) is the exception: it is
// redacted with the answer profile, credential formats only.
//
// Only *p itself is written: a slice, map or pointer met on the way is
// replaced by a scrubbed copy, so data shared with caches (the event
// tail, the overview's report, a candidate source) is never modified and
// concurrent pages do not race.
// patchTextType is [patchText]'s type, which [scrubValue] redacts with
// patchRedactor.
var (
	patchTextType = reflect.TypeFor[patchText]()
	patchRedactor = redact.NewAnswer()
)

func scrub(red *redact.Redactor, p any) {
	scrubValue(red, reflect.ValueOf(p).Elem())
}

func scrubValue(red *redact.Redactor, v reflect.Value) {
	if !v.CanSet() {
		return // unexported field (time.Time's, for one): not page data
	}
	switch v.Kind() {
	case reflect.String:
		if v.Type() == patchTextType {
			v.SetString(quarantine.Visible(patchRedactor.String(v.String())))
			return
		}
		v.SetString(quarantine.Visible(red.String(v.String())))
	case reflect.Pointer:
		if !v.IsNil() {
			c := reflect.New(v.Type().Elem())
			c.Elem().Set(v.Elem())
			scrubValue(red, c.Elem())
			v.Set(c)
		}
	case reflect.Interface:
		if !v.IsNil() {
			c := reflect.New(v.Elem().Type()).Elem()
			c.Set(v.Elem())
			scrubValue(red, c)
			v.Set(c)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			scrubValue(red, v.Field(i))
		}
	case reflect.Slice:
		if !v.IsNil() {
			c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(c, v)
			for i := range c.Len() {
				scrubValue(red, c.Index(i))
			}
			v.Set(c)
		}
	case reflect.Array:
		for i := range v.Len() {
			scrubValue(red, v.Index(i))
		}
	case reflect.Map:
		scrubMap(red, v)
	}
}

// scrubMap replaces a map by a copy with scrubbed keys and values.
func scrubMap(red *redact.Redactor, v reflect.Value) {
	if v.IsNil() {
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
