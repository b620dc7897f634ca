package evidence

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// Version is the digest scheme's name; it starts every encoded digest.
const Version = "EvidenceDigest@1"

// Key is a deployment-local digest key with its epoch. The zero value is
// not usable; get one from [LoadKey] or [NewKey]. It never prints its
// bytes.
type Key struct {
	k     [32]byte
	epoch uint32
	ok    bool
}

// NewKey returns a key over b (exactly 32 bytes) at epoch (>= 1).
func NewKey(b []byte, epoch uint32) (Key, error) {
	if len(b) != 32 || epoch == 0 {
		return Key{}, fmt.Errorf("evidence key: want 32 bytes and epoch >= 1")
	}
	k := Key{epoch: epoch, ok: true}
	copy(k.k[:], b)
	return k, nil
}

// Epoch returns the key epoch.
func (k Key) Epoch() uint32 { return k.epoch }

// String returns a placeholder; the key bytes never print.
func (k Key) String() string { return fmt.Sprintf("evidence.Key{epoch:%d}", k.epoch) }

// GoString is [Key.String].
func (k Key) GoString() string { return k.String() }

// Domain scopes a digest. Every field is a short constant chosen by code
// (never user data): Consumer is who exports the digest ("audit",
// "events"), Purpose the disclosure purpose, Class the record class
// ("egress.decision"). Retention names the retention class the record is
// kept under ("90d", "session").
type Domain struct {
	Consumer  string
	Purpose   string
	Class     string
	Retention string
}

func (d Domain) valid() bool {
	return token(d.Consumer) && token(d.Purpose) && token(d.Class) && token(d.Retention)
}

// token reports whether s matches ^[a-z0-9][a-z0-9._:-]{0,63}$. Checked by
// hand: a regexp in a package variable compiles at every process start
// (issue 8 performance); token_test.go checks the equivalence.
func token(s string) bool {
	if s == "" || len(s) > 64 || !lowerAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !lowerAlnum(s[i]) && strings.IndexByte("._:-", s[i]) < 0 {
			return false
		}
	}
	return true
}

func lowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// Digest returns EvidenceDigest@1 of parts in domain d, formatted as
// "ed1:e<epoch>:<64 hex>". Each part is length-prefixed, so part
// boundaries cannot be shifted. It panics on a zero key or an invalid
// domain: both are programming errors, and a digest under them would be
// a plain hash.
func (k Key) Digest(d Domain, parts ...[]byte) string {
	if !k.ok || !d.valid() {
		panic("evidence: digest with a zero key or an invalid domain")
	}
	m := hmac.New(sha256.New, k.k[:])
	var n [8]byte
	write := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		m.Write(n[:])
		m.Write(b)
	}
	write([]byte(Version))
	var ep [4]byte
	binary.BigEndian.PutUint32(ep[:], k.epoch)
	write(ep[:])
	for _, s := range []string{d.Consumer, d.Purpose, d.Class, d.Retention} {
		write([]byte(s))
	}
	binary.BigEndian.PutUint64(n[:], uint64(len(parts)))
	m.Write(n[:])
	for _, p := range parts {
		write(p)
	}
	return fmt.Sprintf("ed1:e%d:%s", k.epoch, hex.EncodeToString(m.Sum(nil)))
}
