package config

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzFirstLiteral: the token walk never panics, and whenever the decoded
// file (the map the sections are parsed from) holds a credential, as a
// key or a value, the walk reports one.
func FuzzFirstLiteral(f *testing.F) {
	key := syntheticAnthropicKey()
	for _, s := range []string{`{}`, `{"a":[]}`, `{"a":{"b":[1,{"c":"` + key + `"}]}}`, `{"` + key + `":{}}`,
		`{"a":"x","a":"` + key + `"}`, `{"a":[[],[[]],{}],"b":null}`, `{"v":{"commands":[["ghp_` + strings.Repeat("a", 36) + `"]]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		if dec.Decode(&v) != nil || dec.More() {
			return
		}
		if _, ok := v.(map[string]any); !ok {
			return
		}
		_, _, found := firstLiteral([]byte(s))
		if holdsCredential(v) && !found {
			t.Errorf("decoded %q holds a credential the walk did not report", s)
		}
	})
}

func holdsCredential(v any) bool {
	switch t := v.(type) {
	case string:
		return answerFormats.String(t) != t
	case []any:
		for _, e := range t {
			if holdsCredential(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range t {
			if holdsCredential(k) || holdsCredential(e) {
				return true
			}
		}
	}
	return false
}
