package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
)

// Defaults of the delegate section (issue 16 scope 2): the ceilings a
// delegate job's budget may reach when the user has not set their own.
const (
	DefaultDelegateMaxUSD     = 5.0
	DefaultDelegateMaxMinutes = 30
)

// Delegate is the validated "delegate" section: the user's ceilings for a
// delegate job and the models that may be delegated without asking. A
// caller can ask for less than a ceiling, never more.
type Delegate struct {
	// MaxUSD is delegate.maxUSD, the spend ceiling in US dollars (> 0;
	// default [DefaultDelegateMaxUSD]).
	MaxUSD float64
	// MaxMinutes is delegate.maxMinutes, the wall-clock ceiling (1..1440;
	// default [DefaultDelegateMaxMinutes]).
	MaxMinutes int
	// AllowWithoutAsking is delegate.allowWithoutAsking: exact model ids
	// a job may run without the job question, within the ceilings and
	// only when governance allows the model too. Empty: every job asks.
	AllowWithoutAsking []string
}

func defaultDelegate() Delegate {
	return Delegate{MaxUSD: DefaultDelegateMaxUSD, MaxMinutes: DefaultDelegateMaxMinutes}
}

// DelegateErr returns nil if the delegate section is usable (or absent),
// else a *KeyError naming the key; delegate jobs are then refused (the
// ceilings the user meant are unknown).
func (f File) DelegateErr() error { return f.delegateErr }

func (f *File) parseDelegate(top map[string]json.RawMessage) error {
	f.Delegate = defaultDelegate()
	raw, ok := top["delegate"]
	if !ok {
		return nil
	}
	d, err := parseDelegateSection(raw)
	if err != nil {
		f.delegateErr = err
		return err
	}
	f.Delegate = d
	return nil
}

func parseDelegateSection(raw json.RawMessage) (Delegate, error) {
	d := defaultDelegate()
	var m map[string]json.RawMessage
	if strictUnmarshal(raw, &m) != nil || m == nil {
		return d, keyErr("delegate", "must be an object")
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "maxUSD":
			var n json.Number
			v, err := 0.0, number(m[k], &n)
			if err == nil {
				v, err = n.Float64()
			}
			if err != nil || !(v > 0) || v > 10_000 {
				return d, keyErr("delegate.maxUSD", "must be a number above 0 and at most 10000")
			}
			d.MaxUSD = v
		case "maxMinutes":
			var n json.Number
			v, err := int64(0), number(m[k], &n)
			if err == nil {
				v, err = n.Int64()
			}
			if err != nil || v < 1 || v > 1440 {
				return d, keyErr("delegate.maxMinutes", "must be a whole number of minutes, 1..1440")
			}
			d.MaxMinutes = int(v)
		case "allowWithoutAsking":
			var ids []string
			if strictUnmarshal(m[k], &ids) != nil || slices.Contains(ids, "") {
				return d, keyErr("delegate.allowWithoutAsking", "must be an array of exact model ids")
			}
			d.AllowWithoutAsking = ids
		default:
			return d, keyErr("delegate."+k, "unknown key (known: maxUSD, maxMinutes, allowWithoutAsking)")
		}
	}
	return d, nil
}

// number decodes a JSON number; json.Number alone would also take the
// string "2".
func number(raw json.RawMessage, n *json.Number) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] == '"' {
		return errors.New("not a number")
	}
	return strictUnmarshal(raw, n)
}
