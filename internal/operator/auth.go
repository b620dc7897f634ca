package operator

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"time"
)

// Authentication limits: a burst of 10 wrong credentials, then one per
// second. A missing credential (every browser's first request) does not
// consume the budget, so a page elsewhere cannot lock the operator out
// merely by making the browser fetch without credentials. The right
// credential is never limited: it has 256 random bits, so the budget
// bounds the cost of refusals, not the chance of a guess, and a spent
// budget must not lock the operator out (any local process can spend it).
const (
	authBurst = 10
	authEvery = time.Second
)

// authenticator checks the Basic credential in constant time: both sides
// are HMAC-SHA-256 digests under a per-process random key, so neither the
// comparison nor a length difference reveals anything about the password.
type authenticator struct {
	key    []byte
	want   []byte
	budget *bucket
}

func newAuthenticator(c Credential, now func() time.Time) *authenticator {
	a := &authenticator{key: make([]byte, 32), budget: newBucket(authBurst, authEvery, now)}
	rand.Read(a.key)
	a.want = a.digest(User, c.password.Reveal())
	return a
}

func (a *authenticator) digest(user, pass string) []byte {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(user))
	m.Write([]byte{0})
	m.Write([]byte(pass))
	return m.Sum(nil)
}

// check returns "" when r carries the credential, else the refusal
// reason: operator.auth_missing, operator.auth_invalid or (a wrong
// credential with the failure budget spent) operator.auth_rate_limited,
// with the wait for the latter. The credential is compared on every
// request that carries one, limited or not.
func (a *authenticator) check(r *http.Request) (reason string, wait time.Duration) {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return "operator.auth_missing", 0
	}
	if subtle.ConstantTimeCompare(a.digest(user, pass), a.want) == 1 {
		return "", 0
	}
	if ok, wait := a.budget.take(); !ok {
		return "operator.auth_rate_limited", wait
	}
	return "operator.auth_invalid", 0
}

// challenge writes the 401 or 429 for reason.
func challenge(w http.ResponseWriter, reason string, wait time.Duration) {
	if reason == "operator.auth_rate_limited" {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait/time.Second)+1))
		refuse(w, http.StatusTooManyRequests, reason)
		return
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="coagent8 operator", charset="UTF-8"`)
	refuse(w, http.StatusUnauthorized, reason)
}
