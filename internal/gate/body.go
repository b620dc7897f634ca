package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// body is the part of a model request the gate reads.
type body struct {
	Model           string `json:"model"`
	MaxTokens       *int64 `json:"max_tokens"`        // Anthropic
	MaxOutputTokens *int64 `json:"max_output_tokens"` // OpenAI Responses
}

// maxBody caps a request body (bytes). Larger requests are refused before
// anything is reserved.
const maxBody = 32 << 20

// readBody reads r's body up to maxBody, in one allocation when the
// client declared its length.
func readBody(r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(nil, r.Body, maxBody)
	if n := r.ContentLength; n > 0 && n <= maxBody {
		b := make([]byte, n)
		if _, err := io.ReadFull(body, b); err != nil {
			return nil, err
		}
		// Nothing may follow the declared length (net/http enforces it).
		return b, nil
	}
	return io.ReadAll(body)
}

// meteredKeys are the top-level keys the gate binds and meters on.
var meteredKeys = []string{"model", "max_tokens", "max_output_tokens"}

// parseBody reads the model and the output limit of a request body.
// encoding/json matches keys case-insensitively (with Unicode folding)
// and keeps the last duplicate, while providers read keys exactly; the
// gate forwards the original bytes, so a body whose top-level keys are
// duplicated, or whose metered keys appear in another spelling, is
// refused: otherwise the gate could meter one model or limit while the
// provider runs another (red-team finding, parser differential).
func parseBody(b []byte) (body, error) {
	if err := strictKeys(b); err != nil {
		return body{}, err
	}
	var req body
	if err := json.Unmarshal(b, &req); err != nil {
		return body{}, errors.New("request body is not a JSON object")
	}
	if req.Model == "" {
		return body{}, errors.New("request body names no model")
	}
	for _, p := range []*int64{req.MaxTokens, req.MaxOutputTokens} {
		if p != nil && *p <= 0 {
			return body{}, errors.New("output limit must be positive")
		}
	}
	return req, nil
}

// outputLimit returns the output tokens to reserve: the request's own
// limit (the provider enforces it), else the grant's ceiling.
func (b body) outputLimit(ceiling int64) int64 {
	switch {
	case b.MaxTokens != nil:
		return *b.MaxTokens
	case b.MaxOutputTokens != nil:
		return *b.MaxOutputTokens
	}
	return ceiling
}

// strictKeys refuses duplicate top-level keys and case- or
// Unicode-folded variants of the metered keys.
func strictKeys(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("request body is not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return errors.New("request body is not a JSON object")
		}
		if seen[key] {
			return errors.New("request body repeats the key " + strconv.Quote(key))
		}
		seen[key] = true
		for _, m := range meteredKeys {
			if key != m && strings.EqualFold(key, m) {
				return errors.New("request body spells " + m + " ambiguously")
			}
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return errors.New("request body is not a JSON object")
		}
	}
	return nil
}
