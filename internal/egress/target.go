package egress

import (
	"crypto/sha256"
	"encoding/binary"
	"net/url"
	"strings"
)

// TargetKind tags the one remote target of a decision.
type TargetKind uint8

// Target kinds. Only [KindPortal] is implemented; a decision for another
// kind is refused until its gate exists.
const (
	KindPortal  TargetKind = iota + 1 // a cloud model / provider service call
	KindPeer                          // an agent-to-agent peer
	KindRuntime                       // a delegated foreign runtime
)

// String returns the kind's stable name.
func (k TargetKind) String() string {
	switch k {
	case KindPortal:
		return "portal"
	case KindPeer:
		return "peer"
	case KindRuntime:
		return "runtime"
	}
	panic("egress: unknown TargetKind")
}

// Target is the closed sum of remote targets: [PortalTarget],
// [PeerTarget], [RuntimeTarget]. Other packages cannot add kinds.
type Target interface {
	Kind() TargetKind
	encode() []byte
}

// PortalTarget is a provider call: provider, operation (the
// admitted route), model, canonical HTTPS origin and the exact request
// target (path and query as sent), plus the custody route: the origins
// of the configured intermediaries the request passes through, in order
// (nil = the gate connects to Origin itself), and the route's digest.
// Each intermediary is a recipient too: the policy's recipient
// requirements apply to its facts ([Config.Intermediaries]) as to the
// provider's (issue 18 scope 5).
type PortalTarget struct {
	Provider       string
	Operation      string
	Model          string
	Origin         string
	RequestTarget  string
	Intermediaries []string
	CustodyRoute   []byte
}

// PeerTarget is an agent-to-agent peer. Defined, refused.
type PeerTarget struct {
	Principal, TaskSchema, AdapterRevision, Origin string
}

// RuntimeTarget is a delegated runtime. Defined, refused.
type RuntimeTarget struct {
	Runtime, Profile, Job, AdapterRevision, Destination string
}

// Kind returns [KindPortal].
func (PortalTarget) Kind() TargetKind { return KindPortal }

// Kind returns [KindPeer].
func (PeerTarget) Kind() TargetKind { return KindPeer }

// Kind returns [KindRuntime].
func (RuntimeTarget) Kind() TargetKind { return KindRuntime }

func (t PortalTarget) encode() []byte {
	fields := []string{"portal", t.Provider, t.Operation, t.Model, CanonicalOrigin(t.Origin), t.RequestTarget, string(t.CustodyRoute)}
	for _, hop := range t.Intermediaries {
		fields = append(fields, CanonicalOrigin(hop))
	}
	return enc(fields...)
}
func (t PeerTarget) encode() []byte {
	return enc("peer", t.Principal, t.TaskSchema, t.AdapterRevision, CanonicalOrigin(t.Origin))
}
func (t RuntimeTarget) encode() []byte {
	return enc("runtime", t.Runtime, t.Profile, t.Job, t.AdapterRevision, t.Destination)
}

// enc is a length-prefixed encoding, so no field can shift into another.
func enc(fields ...string) []byte {
	var b []byte
	for _, f := range fields {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}

// custodyRecord names t's custody route for the decision record:
// "custody=gate>HOP>...>ORIGIN" (origins only, never a credential).
func custodyRecord(t Target) string {
	pt, ok := t.(PortalTarget)
	if !ok {
		return ""
	}
	hops := []string{"custody=gate"}
	for _, hop := range pt.Intermediaries {
		hops = append(hops, CanonicalOrigin(hop))
	}
	return strings.Join(append(hops, CanonicalOrigin(pt.Origin)), ">")
}

func targetDigest(t Target) [32]byte { return sha256.Sum256(t.encode()) }

// CanonicalOrigin lowercases scheme and host and drops the scheme's
// default port, so "HTTPS://API.EXAMPLE:443" equals "https://api.example"
// . Anything that is not a bare origin is returned unchanged (and
// so never equals a canonical one).
func CanonicalOrigin(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return s
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}
