package consent

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MultiRoundTrip reports whether protocol revision version asks by input
// requests in the tool result instead of elicitation/create (MCP
// 2026-07-28 and later): the flow [Gate.Check] uses for consult, offered
// to the other questions (delegate's job question, request_admission's
// form) through [Gate.AskBound] and [Gate.AnswerBound].
func MultiRoundTrip(version string) bool { return multiRoundTrip(version) }

// boundState is the RequestState of a bound question. V 2 keeps it apart
// from consult's state (V 1): neither verifies as the other, so a consult
// answer can never approve a job or an admission, nor the reverse.
type boundState struct {
	V       int    `json:"v"`
	Key     string `json:"k"` // the input request's key: which question
	Bind    string `json:"q"` // hex SHA-256 of the question's binding
	Expires int64  `json:"e"` // unix seconds
	Nonce   string `json:"n"`
}

// AskBound returns the first-pass result of a multi-round-trip question:
// p as the input request named key, no content, and a RequestState signed
// with the gate's per-process key that carries key, SHA-256(binding), an
// expiry ([Options.Timeout]) and a nonce. binding must be every value the
// answer approves (the question's arguments and what the server resolved
// from them): the retried call is accepted only when it rebuilds the same
// binding. It has no side effect; return its result unchanged.
func (g *Gate) AskBound(key, binding string, p *mcp.ElicitParams) *mcp.CallToolResult {
	nonce := make([]byte, 16)
	rand.Read(nonce) // crypto/rand.Read never fails (Go ≥ 1.24)
	s := boundState{V: 2, Key: key, Bind: digest(binding), Expires: g.now().Add(g.timeout).Unix(),
		Nonce: base64.RawURLEncoding.EncodeToString(nonce)}
	body, _ := json.Marshal(s) // fixed struct of strings and ints
	enc := base64.RawURLEncoding.EncodeToString(body)
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{key: p},
		RequestState:  enc + "." + base64.RawURLEncoding.EncodeToString(g.mac(enc)),
	}
}

// Answered reports whether req is the retried call of a multi-round-trip
// question (it carries input responses or a request state), which must be
// judged with [Gate.AnswerBound] and never asked again.
func Answered(req *mcp.CallToolRequest) bool {
	return req != nil && req.Params != nil && (len(req.Params.InputResponses) > 0 || req.Params.RequestState != "")
}

// AnswerBound redeems the retried call req of the question [Gate.AskBound]
// asked under key with binding. It returns the answer, or "" and nil with
// the refusal reason:
//
//   - [ReasonInvalidState]: the state is missing, forged (bad signature),
//     another question's (other key, consult's), bound to other values
//     (the call's arguments or what they resolve to changed), or already
//     spent (replayed: one answer covers one call);
//   - [ReasonTimeout]: the state expired;
//   - [ReasonInvalidAnswer]: no elicitation answer under key (an answer
//     for another question, or none).
//
// The state is spent before the answer is read, so a refused answer
// cannot be retried with the same state either. Judging the answer
// (only accept with approve === true) is the caller's, as for
// elicitation/create. It records no event: the caller's refusal does.
func (g *Gate) AnswerBound(req *mcp.CallToolRequest, key, binding string) (*mcp.ElicitResult, string) {
	if req == nil || req.Params == nil {
		return nil, ReasonInvalidState
	}
	s, ok := g.verifyBound(req.Params.RequestState)
	switch {
	case !ok || s.Key != key || s.Bind != digest(binding):
		return nil, ReasonInvalidState
	case g.now().Unix() > s.Expires:
		return nil, ReasonTimeout
	}
	g.mu.Lock()
	g.prune()
	_, spent := g.used[s.Nonce]
	if !spent {
		g.used[s.Nonce] = time.Unix(s.Expires, 0)
	}
	g.mu.Unlock()
	if spent {
		return nil, ReasonInvalidState
	}
	res, _ := req.Params.InputResponses[key].(*mcp.ElicitResult)
	if res == nil {
		return nil, ReasonInvalidAnswer
	}
	return res, ""
}

func (g *Gate) verifyBound(raw string) (boundState, bool) {
	enc, sig, ok := strings.Cut(raw, ".")
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(got, g.mac(enc)) {
		return boundState{}, false
	}
	body, err := base64.RawURLEncoding.DecodeString(enc)
	var s boundState
	if err != nil || json.Unmarshal(body, &s) != nil || s.V != 2 || s.Nonce == "" || s.Key == "" {
		return boundState{}, false
	}
	return s, true
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
