package consent

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/policy"
)

// state is what RequestState carries between the two passes: the concrete
// backend and model asked about, a digest of the call and the question
// ([callBinding]), the deadline and a nonce. It is signed, not secret.
type state struct {
	V       int    `json:"v"`
	Backend string `json:"b"`
	Model   string `json:"m"`
	Bind    string `json:"q"`
	Expires int64  `json:"e"` // unix seconds
	Issued  int64  `json:"i"` // unix milliseconds: how fast the host answered (see quick)
	Nonce   string `json:"n"`
}

// callBinding is what a consult answer approves: the tool call that asked
// (its tool and its arguments, by meaning: a host may re-encode them) and
// the question the user was shown (Message: backend, model, effort,
// price, why). Bound into the state, it makes a retry that changes any of
// them — another reasoning effort, workspace or prompt, or another tool —
// consent.invalid_state instead of a run the user never saw asked, as
// [Gate.AskBound] does for the job and admission questions.
func callBinding(req *mcp.CallToolRequest, d policy.Decision) string {
	name, args := "", ""
	if req != nil && req.Params != nil {
		name, args = req.Params.Name, string(req.Params.Arguments)
		var v any
		if json.Unmarshal(req.Params.Arguments, &v) == nil {
			b, _ := json.Marshal(v) // object keys sorted; a value decoded from JSON always encodes
			args = string(b)
		}
	}
	return digest("consult\x00" + name + "\x00" + args + "\x00" + Message(d))
}

// inputRequest returns the first-pass result: the form as an input request
// and no content (the SDK rejects a result with both). bind is the
// call's [callBinding].
func (g *Gate) inputRequest(d policy.Decision, bind string) *mcp.CallToolResult {
	nonce := make([]byte, 16)
	rand.Read(nonce) // crypto/rand.Read never fails (Go ≥ 1.24)
	now := g.now()
	s := state{V: 1, Backend: d.Backend, Model: d.Model, Bind: bind, Expires: now.Add(g.timeout).Unix(), Issued: now.UnixMilli(),
		Nonce: base64.RawURLEncoding.EncodeToString(nonce)}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{inputKey: params(d)},
		RequestState:  g.sign(s),
	}
}

func (g *Gate) sign(s state) string {
	body, _ := json.Marshal(s) // fixed struct of strings and ints
	enc := base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + base64.RawURLEncoding.EncodeToString(g.mac(enc))
}

func (g *Gate) mac(msg string) []byte {
	m := hmac.New(sha256.New, g.key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// redeem checks a retried call's state and spends it. It returns how long
// the answer took and "" when the state is valid for d and the call's
// binding bind, else the refusal reason.
func (g *Gate) redeem(raw, bind string, d policy.Decision) (time.Duration, string) {
	s, ok := g.verify(raw)
	switch {
	case !ok || s.Backend != d.Backend || s.Model != d.Model || s.Bind != bind:
		return 0, ReasonInvalidState
	case g.now().Unix() > s.Expires:
		return 0, ReasonTimeout
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prune()
	if _, spent := g.used[s.Nonce]; spent {
		return 0, ReasonInvalidState // one answer covers one turn
	}
	g.used[s.Nonce] = time.Unix(s.Expires, 0)
	return g.now().Sub(time.UnixMilli(s.Issued)), ""
}

func (g *Gate) verify(raw string) (state, bool) {
	enc, sig, ok := strings.Cut(raw, ".")
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(got, g.mac(enc)) {
		return state{}, false
	}
	body, err := base64.RawURLEncoding.DecodeString(enc)
	var s state
	if err != nil || json.Unmarshal(body, &s) != nil || s.V != 1 || s.Nonce == "" {
		return state{}, false
	}
	return s, true
}

// prune forgets spent nonces whose state has expired anyway. g.mu is held.
// "Expired" is the test [Gate.redeem] and [Gate.AnswerBound] apply, in
// whole seconds: a state expiring at second E still passes up to
// E+0.999…, so its nonce must be kept that long (with time.After it was
// dropped at E+0.001 and a replay in that last second was accepted).
func (g *Gate) prune() {
	now := g.now().Unix()
	for n, exp := range g.used {
		if now > exp.Unix() {
			delete(g.used, n)
		}
	}
}
