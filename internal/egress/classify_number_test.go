package egress

import (
	"strings"
	"testing"
)

// TestHasCredentialLargeNumbers: a valid JSON number beyond float64 next
// to a \u escape is no credential (it was refused egress.category, read
// as undecodable); a credential escaped beside one is still found, and
// a body that is not one JSON value still fails closed.
func TestHasCredentialLargeNumbers(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("Ab3", 30) + "AA"
	escaped := strings.ReplaceAll(key, "-", `\u002d`)
	for _, tt := range []struct {
		name, body string
		want       bool
	}{
		{"large number and escape", `{"text":"caf\u00e9","n":1E1000}`, false},
		{"negative large exponent", `{"text":"\u00e9","n":-1e-99999}`, false},
		{"escaped credential beside a large number", `{"text":"` + escaped + `","n":1E1000}`, true},
		{"data after the value", `{"text":"\u00e9"} {"x":1}`, true},
	} {
		if got := hasCredential([]byte(tt.body), true); got != tt.want {
			t.Errorf("%s: hasCredential = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestCredentialScanPanicFailsClosed: a panic in the credential scan,
// which runs on its own goroutine over the agent's body, neither ends
// the process nor admits the body: it reads as carrying a credential.
func TestCredentialScanPanicFailsClosed(t *testing.T) {
	defer func(f func([]byte, bool) bool) { credentialIn = f }(credentialIn)
	credentialIn = func([]byte, bool) bool { panic("scanner bug") }
	cred := make(chan bool, 1)
	go scanCredential(cred, []byte(`{"text":"hello"}`), nil, true)
	if got := <-cred; !got {
		t.Errorf("scan that panicked reported %v, want true (fail closed)", got)
	}
}
