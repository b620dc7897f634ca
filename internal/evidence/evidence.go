package evidence

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"regexp"
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

var token = regexp.MustCompile(`^[a-z0-9][a-z0-9._:-]{0,63}$`)

func (d Domain) valid() bool {
	return token.MatchString(d.Consumer) && token.MatchString(d.Purpose) &&
		token.MatchString(d.Class) && token.MatchString(d.Retention)
}

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
