package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/coagent8/coagent8/internal/fault"
)

// ReasonInvalidJSON is the reason turns are refused when the configuration
// file does not parse as JSON at all (a typo'd brace, a truncated write,
// plain text). It is distinct from config.governance_invalid, well-formed
// JSON whose content is wrong, because the fix differs: the user repairs
// the syntax at Line:Column rather than a setting.
const ReasonInvalidJSON = "config.invalid_json"

// JSONError is a configuration file that does not parse as one JSON
// value. Line and Column are 1-based and say where the parser stopped
// (Column counts characters, as editors do); Problem is the parser's own
// words.
type JSONError struct {
	Path         string
	Line, Column int
	Problem      string
	Err          error // the parser's error; nil for trailing data
}

func (e *JSONError) Error() string {
	return fmt.Sprintf("%s:%d:%d: invalid JSON: %s", e.Path, e.Line, e.Column, e.Problem)
}

func (e *JSONError) Unwrap() error { return e.Err }

// decodeTop decodes the file's one top-level JSON value. A file that is
// not JSON gives a *JSONError (Path unset); valid JSON of another shape
// gives the decoder's type error, for the caller to call "not an object".
func decodeTop(b []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		if je := syntaxError(b, err); je != nil {
			return nil, je
		}
		return nil, err
	}
	// dec.More would miss a stray "}" or "]" after the value: look at
	// the rest of the file instead.
	rest := int(dec.InputOffset())
	if n := len(bytes.TrimLeft(b[rest:], " \t\r\n")); n > 0 {
		return nil, positioned(b, len(b)-n, "trailing data after the JSON value", nil)
	}
	return top, nil
}

// syntaxError turns a decoder error that means "this is not JSON" into a
// *JSONError; for any other error (a type mismatch) it returns nil.
func syntaxError(b []byte, err error) *JSONError {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read, the offending one included.
		return positioned(b, int(se.Offset)-1, se.Error(), err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return positioned(b, len(b), "unexpected EOF: the file ends before its JSON value does (truncated?)", err)
	case errors.Is(err, io.EOF):
		return positioned(b, len(b), "the file is empty: write {} for the defaults", err)
	}
	return nil
}

// positioned is a *JSONError at byte offset off of b.
func positioned(b []byte, off int, problem string, err error) *JSONError {
	off = min(max(off, 0), len(b))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	start := bytes.LastIndexByte(b[:off], '\n') + 1
	return &JSONError{Line: line, Column: 1 + utf8.RuneCount(b[start:off]), Problem: problem, Err: err}
}

// invalidJSONFault is the POLICY_DENIED every turn returns while the file
// is not JSON; shown is the path as the message may name it (home as ~).
func invalidJSONFault(je *JSONError, shown string) *fault.Error {
	return fault.Wrap(fault.PolicyDenied, ReasonInvalidJSON, fmt.Sprintf(
		"turns are refused until the configuration is fixed: %s is not valid JSON: line %d, column %d: %s",
		shown, je.Line, je.Column, answerFormats.String(je.Problem)), je).
		With("key", "config").With("line", fmt.Sprint(je.Line)).With("column", fmt.Sprint(je.Column))
}
