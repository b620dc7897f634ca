package config

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
)

// answerFormats recognises credential formats (the answer profile of
// internal/redact: provider, cloud and forge keys, tokens, private keys).
var answerFormats = redact.NewAnswer()

// literalCredential finds a literal credential anywhere in the
// configuration file b, a JSON object (R-100: the settings hold
// references, never values), and returns an INVALID_INPUT *fault.Error,
// reason config.literal_credential, naming the key path
// ("gate.credentials.anthropic", "verify.commands[0][2]") and the
// redacted value; nil when there is none. It reads the file's tokens,
// not its decoded map, so a value that a later duplicate key replaces is
// checked too; the first in file order is reported. A credential used as
// a key is reported with the path redacted: the error must not quote it.
func literalCredential(b []byte) error {
	path, red, ok := firstLiteral(b)
	if !ok {
		return nil
	}
	if path == "" {
		path = `""` // the top-level key ""
	}
	return fault.New(fault.InvalidInput, "config.literal_credential",
		fmt.Sprintf("configuration key %s holds a literal credential (%s); store a reference such as env:NAME or file:/abs/path instead", path, red)).
		With("key", path)
}

// literalFault is the POLICY_DENIED refusal of turns for the file whose
// literal credential lit reports: the same reason and key as lit, which
// the gate commands return, so every command names the file's problem
// alike (it was config.governance_invalid for turns; newcomer report).
func literalFault(lit *fault.Error) *fault.Error {
	return fault.Wrap(fault.PolicyDenied, lit.Reason, "turns are refused until the configuration is fixed: "+lit.Message, lit).
		With("key", lit.Details["key"])
}

// frame is one open object or array of the token walk: path is its own
// path, key the current member's name, n the next array index.
type frame struct {
	path    string
	object  bool
	key     string
	wantKey bool
	n       int
}

// member returns the path of the value the frame is at.
func (f *frame) member() string {
	if !f.object {
		return fmt.Sprintf("%s[%d]", f.path, f.n)
	}
	if f.path == "" {
		return f.key
	}
	return f.path + "." + f.key
}

// next moves the frame past a complete value.
func (f *frame) next() {
	if f.object {
		f.wantKey = true
	} else {
		f.n++
	}
}

// firstLiteral walks b's tokens and returns the path and redacted form of
// the first string, key or value, that carries a credential format; ok is
// false when none does. The caller checked that b decodes: the walk ends
// at the end of its value.
func firstLiteral(b []byte) (path, red string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", "", false // the end of the value: nothing found
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				advance(stack)
				continue
			}
			top.key, top.wantKey = tok.(string), false
			if p := top.member(); answerFormats.String(p) != p {
				return answerFormats.String(p), "used as a key", true
			}
			continue
		}
		here := ""
		if top != nil {
			here = top.member()
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{path: here, object: true, wantKey: true})
			case '[':
				stack = append(stack, &frame{path: here})
			default: // ']'
				stack = stack[:len(stack)-1]
				advance(stack)
			}
		case string:
			if r := answerFormats.String(t); r != t {
				return here, r, true
			}
			advance(stack)
		default:
			advance(stack)
		}
	}
}

// advance moves the innermost open frame past the value just completed.
func advance(stack []*frame) {
	if len(stack) > 0 {
		stack[len(stack)-1].next()
	}
}
