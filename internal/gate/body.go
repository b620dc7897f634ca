package gate

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
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

// parseBody reads the model and the output limit of a request body.
func parseBody(b []byte) (body, error) {
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
