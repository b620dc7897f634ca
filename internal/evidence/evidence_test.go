package evidence

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testKey(t *testing.T, epoch uint32) Key {
	t.Helper()
	k, err := NewKey([]byte(strings.Repeat("k", 32)), epoch)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var dom = Domain{Consumer: "audit", Purpose: "provider-request", Class: "egress.decision", Retention: "90d"}

// TestDomainSeparation covers R-152: consumer, purpose, class, retention
// and epoch each change the digest; none equals the plain hash.
func TestDomainSeparation(t *testing.T) {
	in := []byte("short prompt")
	base := testKey(t, 1).Digest(dom, in)
	variants := map[string]string{
		"consumer":  testKey(t, 1).Digest(Domain{"events", dom.Purpose, dom.Class, dom.Retention}, in),
		"purpose":   testKey(t, 1).Digest(Domain{dom.Consumer, "closed-diagnostic-recording", dom.Class, dom.Retention}, in),
		"class":     testKey(t, 1).Digest(Domain{dom.Consumer, dom.Purpose, "egress.refusal", dom.Retention}, in),
		"retention": testKey(t, 1).Digest(Domain{dom.Consumer, dom.Purpose, dom.Class, "session"}, in),
		"epoch":     testKey(t, 2).Digest(dom, in),
		"split":     testKey(t, 1).Digest(dom, []byte("short"), []byte(" prompt")),
	}
	for name, got := range variants {
		if got == base {
			t.Errorf("%s: digest unchanged", name)
		}
	}
	plain := sha256.Sum256(in)
	if strings.Contains(base, hex.EncodeToString(plain[:])) {
		t.Error("digest equals the plain hash")
	}
	if got := testKey(t, 1).Digest(dom, in); got != base {
		t.Errorf("not deterministic: %s vs %s", got, base)
	}
	if !strings.HasPrefix(base, "ed1:e1:") || len(base) != len("ed1:e1:")+64 {
		t.Errorf("format %q", base)
	}
}

// TestHMACDefinition pins the encoding: the value is HMAC-SHA-256 under
// the key over the length-prefixed domain encoding.
func TestHMACDefinition(t *testing.T) {
	k := testKey(t, 3)
	m := hmac.New(sha256.New, []byte(strings.Repeat("k", 32)))
	lp := func(b []byte) {
		n := make([]byte, 8)
		for i := range 8 {
			n[7-i] = byte(uint64(len(b)) >> (8 * i))
		}
		m.Write(n)
		m.Write(b)
	}
	lp([]byte(Version))
	lp([]byte{0, 0, 0, 3})
	for _, s := range []string{dom.Consumer, dom.Purpose, dom.Class, dom.Retention} {
		lp([]byte(s))
	}
	m.Write([]byte{0, 0, 0, 0, 0, 0, 0, 1})
	lp([]byte("x"))
	want := "ed1:e3:" + hex.EncodeToString(m.Sum(nil))
	if got := k.Digest(dom, []byte("x")); got != want {
		t.Errorf("got %s want %s", got, want)
	}
}

func TestInvalidUsePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"zero key":   func() { Key{}.Digest(dom) },
		"bad domain": func() { testKey(t, 1).Digest(Domain{Consumer: "Has Space", Purpose: "p", Class: "c", Retention: "r"}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
}

func TestLoadKeyFileLifecycle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "evidence.key")
	k1, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v err %v", st.Mode().Perm(), err)
	}
	again, err := LoadKey(path)
	if err != nil || again.Digest(dom) != k1.Digest(dom) || again.Epoch() != 1 {
		t.Fatalf("reload differs: %v", err)
	}
	k2, err := Rotate(path)
	if err != nil || k2.Epoch() != 2 || k2.Digest(dom) == k1.Digest(dom) {
		t.Fatalf("rotate: epoch %d err %v", k2.Epoch(), err)
	}
	if strings.Contains(k2.String(), hex.EncodeToString(k2.k[:])) {
		t.Error("String prints the key")
	}
	os.Chmod(path, 0o644)
	if _, err := LoadKey(path); err == nil {
		t.Error("world-readable key accepted")
	}
	os.WriteFile(path, []byte("garbage"), 0o600)
	os.Chmod(path, 0o600)
	if _, err := LoadKey(path); err == nil {
		t.Error("malformed key accepted")
	}
}
