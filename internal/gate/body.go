package gate

import (
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
	// ToolTypes are the exact "type" of each entry of "tools" ("" for
	// none), MCPServers whether an "mcp_servers" key is present, Prompt
	// whether a "prompt" key is ([body.hostedTool]).
	ToolTypes  []string `json:"-"`
	MCPServers bool     `json:"-"`
	Prompt     bool     `json:"-"`
	// State is the first top-level key, with a value other than null,
	// that names content the provider stores (OpenAI previous_response_id
	// or conversation), or "" ([reachesBeyond], request.provider_state).
	State string `json:"-"`
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

// parseBody reads the model, the output limit and the tool types of a
// request body in one pass over its top-level keys. encoding/json alone would match keys
// case-insensitively (with Unicode folding) and keep the last duplicate,
// while providers read keys exactly; the gate forwards the original
// bytes, so a body whose top-level keys repeat, or whose metered keys
// appear in another spelling, is refused: otherwise the gate could meter
// one model or limit while the provider runs another (red-team finding,
// parser differential).
func parseBody(b []byte) (body, error) {
	if !json.Valid(b) {
		return body{}, errNotObject
	}
	var req body
	if err := members(b, req.field); err != nil {
		return body{}, err
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

var errNotObject = errors.New("request body is not a JSON object")

// readKeys are the top-level keys parseBody reads; another spelling of
// one is refused (a provider reads the exact key).
var readKeys = []string{"model", "max_tokens", "max_output_tokens", "tools", "mcp_servers", "prompt", "previous_response_id", "conversation"}

// field decodes the value of key into req when it is a metered key, the
// tools, mcp_servers or prompt ([body.hostedTool]) or a stored-state key
// (body.State), and skips it otherwise.
func (req *body) field(key string, raw []byte) error {
	var dst any
	switch key {
	case "model":
		dst = &req.Model
	case "max_tokens":
		dst = &req.MaxTokens
	case "max_output_tokens":
		dst = &req.MaxOutputTokens
	case "tools":
		var err error
		req.ToolTypes, err = toolTypes(raw)
		return err
	case "mcp_servers", "prompt":
		req.MCPServers = req.MCPServers || key == "mcp_servers"
		req.Prompt = req.Prompt || key == "prompt"
		return nil
	case "previous_response_id", "conversation":
		if req.State == "" && string(raw) != "null" {
			req.State = key
		}
		return nil
	default:
		if m := spelledOtherwise(key, readKeys...); m != "" {
			return errors.New("request body spells " + m + " ambiguously")
		}
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return errors.New("request body has an invalid " + strconv.Quote(key))
	}
	return nil
}

// outputLimit returns the output tokens to reserve for a request to
// provider p: the limit the provider itself reads and enforces (Anthropic
// max_tokens, OpenAI max_output_tokens), else the grant's ceiling. The
// other provider's field is not a limit there: an OpenAI body's
// "max_tokens":1 would have reserved one token for an unbounded answer.
func (b body) outputLimit(p Provider, ceiling int64) int64 {
	own := b.MaxTokens
	if p == OpenAI {
		own = b.MaxOutputTokens
	}
	if own == nil {
		return ceiling
	}
	return *own
}

// sameMetering reports whether b and c name the same model and the same
// output limits (both absent, or equal).
func (b body) sameMetering(c body) bool {
	same := func(x, y *int64) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return b.Model == c.Model && same(b.MaxTokens, c.MaxTokens) && same(b.MaxOutputTokens, c.MaxOutputTokens)
}

// spelledOtherwise returns the name among names that key spells in
// another case (with Unicode folding, as encoding/json matches keys), or
// "" when none: a provider reads the exact key, so a key the gate would
// read one way and a decoder another is refused, never guessed.
func spelledOtherwise(key string, names ...string) string {
	for _, n := range names {
		if key != n && strings.EqualFold(key, n) {
			return n
		}
	}
	return ""
}
