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
// backend and model asked about, the deadline and a nonce. It is signed,
// not secret.
type state struct {
	V       int    `json:"v"`
	Backend string `json:"b"`
	Model   string `json:"m"`
	Expires int64  `json:"e"` // unix seconds
	Issued  int64  `json:"i"` // unix milliseconds: how fast the host answered (see quick)
	Nonce   string `json:"n"`
}

// inputRequest returns the first-pass result: the form as an input request
// and no content (the SDK rejects a result with both).
func (g *Gate) inputRequest(d policy.Decision) *mcp.CallToolResult {
	nonce := make([]byte, 16)
	rand.Read(nonce) // crypto/rand.Read never fails (Go ≥ 1.24)
	now := g.now()
	s := state{V: 1, Backend: d.Backend, Model: d.Model, Expires: now.Add(g.timeout).Unix(), Issued: now.UnixMilli(),
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
// the answer took and "" when the state is valid for d, else the refusal
// reason.
func (g *Gate) redeem(raw string, d policy.Decision) (time.Duration, string) {
	s, ok := g.verify(raw)
	switch {
	case !ok || s.Backend != d.Backend || s.Model != d.Model:
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
func (g *Gate) prune() {
	now := g.now()
	for n, exp := range g.used {
		if now.After(exp) {
			delete(g.used, n)
		}
	}
}
