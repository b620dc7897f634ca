package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
)

// answerFormats recognises credential formats (the answer profile of
// internal/redact: provider, cloud and forge keys, tokens, private keys).
var answerFormats = redact.NewAnswer()

// literalCredential finds a literal credential anywhere in the decoded
// configuration (R-100: the settings hold references, never values) and
// returns an INVALID_INPUT *fault.Error, reason config.literal_credential,
// naming the key path ("gate.credentials.anthropic",
// "verify.commands[0][2]") and the redacted value; nil when there is
// none. Keys are visited in sorted order, so the first is reported.
func literalCredential(top map[string]json.RawMessage) error {
	for _, k := range slices.Sorted(maps.Keys(top)) {
		var v any
		dec := json.NewDecoder(bytes.NewReader(top[k]))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			continue // the section's own parser reports it
		}
		if path, red := findLiteral(k, v); path != "" {
			return fault.New(fault.InvalidInput, "config.literal_credential",
				fmt.Sprintf("configuration key %s holds a literal credential (%s); store a reference such as env:NAME or file:/abs/path instead", path, red)).
				With("key", path)
		}
	}
	return nil
}

// findLiteral returns the path of the first string under v (at path)
// that carries a credential format, and its redacted form. A credential
// used as a key, whatever its value's type, is reported with the path
// redacted: the error must not quote it.
func findLiteral(path string, v any) (string, string) {
	if red := answerFormats.String(path); red != path {
		return red, "used as a key"
	}
	switch t := v.(type) {
	case string:
		if red := answerFormats.String(t); red != t {
			return path, red
		}
	case []any:
		for i, e := range t {
			if p, red := findLiteral(fmt.Sprintf("%s[%d]", path, i), e); p != "" {
				return p, red
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if p, red := findLiteral(path+"."+k, t[k]); p != "" {
				return p, red
			}
		}
	}
	return "", ""
}
