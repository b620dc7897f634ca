package egress

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

func reasonOf(err error) string {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe.Reason
	}
	return ""
}

// TestRules: one named allow/deny fixture per rule of issue 10.
func TestRules(t *testing.T) {
	tests := []struct {
		name   string
		tx     func(t *testing.T) Transmission
		want   string
		absent string // must not be in the sealed bytes
	}{
		{"unlabelled below threshold raw", func(t *testing.T) Transmission { return tx(t, "Public readme.") }, ReasonRaw, ""},
		{"labelled 0.29 raw", func(t *testing.T) Transmission { return tx(t, internalNotes) }, ReasonRaw, ""},
		{"labelled 0.5 filtered", func(t *testing.T) Transmission { return tx(t, "Here: "+dealNotes) }, ReasonFiltered, "Nightingale"},
		{"labelled 0.9 non-declassifiable category", func(t *testing.T) Transmission {
			return tx(t, "Performance review for a named employee: needs improvement in communication.")
		}, ReasonCategory, ""},
		{"credential refused", func(t *testing.T) Transmission { return tx(t, "key="+syntheticKey()) }, ReasonCategory, ""},
		{"non-declassifiable pattern at weight 0.1", func(t *testing.T) Transmission { return tx(t, "ssn 123-45-6789") }, ReasonCategory, ""},
		{"malformed body lineage unknown", func(t *testing.T) Transmission {
			x := tx(t, "x")
			x.Body = []byte(`{"model":"claude-test","messages":"unterminated`)
			return x
		}, ReasonLineage, ""},
		{"peer target refused", func(t *testing.T) Transmission {
			x := tx(t, "hi")
			x.Target = PeerTarget{Principal: "p", Origin: "https://peer.example"}
			return x
		}, ReasonTargetKind, ""},
		{"runtime target refused", func(t *testing.T) Transmission {
			x := tx(t, "hi")
			x.Target = RuntimeTarget{Runtime: "r"}
			return x
		}, ReasonTargetKind, ""},
		{"no target refused", func(t *testing.T) Transmission {
			x := tx(t, "hi")
			x.Target = nil
			return x
		}, ReasonTargetKind, ""},
		{"purpose without capacity refused", func(t *testing.T) Transmission {
			x := tx(t, "hi")
			x.Purpose = "exfiltration"
			return x
		}, ReasonPurpose, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, baseConfig())
			x := tt.tx(t)
			out, err := f.d.Seal(context.Background(), x)
			got := reasonOf(err)
			if err == nil {
				got = map[bool]string{true: ReasonRaw, false: ReasonFiltered}[string(out) == string(x.Body)]
			}
			if got != tt.want {
				t.Fatalf("reason %q want %q (err %v)", got, tt.want, err)
			}
			if err != nil && out != nil {
				t.Error("refusal returned bytes")
			}
			if tt.absent != "" && strings.Contains(string(out), tt.absent) {
				t.Errorf("filtered bytes still contain %q: %s", tt.absent, out)
			}
			if err == nil && tt.want == ReasonFiltered && !strings.Contains(string(out), "[WITHHELD:confidential]") {
				t.Errorf("no placeholder: %s", out)
			}
		})
	}
}

// TestThresholdEdges: R-184 with thresholds 0.3/0.8 and a labelled file
// at exactly each edge; 0.8 refuses even with a filter (D-14).
func TestThresholdEdges(t *testing.T) {
	for _, tt := range []struct {
		w    float64
		want string
	}{{0.29, ReasonRaw}, {0.3, ReasonFiltered}, {0.79, ReasonFiltered}, {0.8, ReasonForbidden}, {1, ReasonForbidden}} {
		c := baseConfig()
		c.Labels[0].Classification = tt.w
		f := newFixture(t, c)
		_, err := f.d.Seal(context.Background(), tx(t, dealNotes))
		got := reasonOf(err)
		if err == nil {
			dec, _, _ := f.d.Decide(context.Background(), tx(t, dealNotes))
			got = dec.Reason()
		}
		if got != tt.want {
			t.Errorf("weight %v: %q want %q", tt.w, got, tt.want)
		}
	}
}

// TestUnknownLineage: a labelled file that cannot be read refuses every
// request while a path label exists (R-183: lineage missing).
func TestUnknownLineage(t *testing.T) {
	f := newFixture(t, baseConfig())
	f.d.SetPolicy(f.d.cur.Load().p, nil)
	if _, err := f.d.Seal(context.Background(), tx(t, "Public readme.")); reasonOf(err) != ReasonLineage {
		t.Errorf("no lineage source: %v", err)
	}
}

// TestSendTimeVerification: a decision binds bytes, target, purpose,
// policy and expiry; each substitution after the decision refuses.
func TestSendTimeVerification(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		mutate func(f *fixture, x *Transmission, wire *[]byte)
		want   string
	}{
		{"unchanged", func(*fixture, *Transmission, *[]byte) {}, ""},
		{"one byte changed", func(_ *fixture, _ *Transmission, w *[]byte) { (*w)[len(*w)-2] ^= 1 }, ReasonWireMismatch},
		{"model substituted", func(_ *fixture, x *Transmission, _ *[]byte) {
			p := x.Target.(PortalTarget)
			p.Model = "claude-other"
			x.Target = p
		}, ReasonTargetMismatch},
		{"path substituted", func(_ *fixture, x *Transmission, _ *[]byte) {
			p := x.Target.(PortalTarget)
			p.RequestTarget = "/v1/messages?beta=true&x=1"
			x.Target = p
		}, ReasonTargetMismatch},
		{"origin substituted", func(_ *fixture, x *Transmission, _ *[]byte) {
			p := x.Target.(PortalTarget)
			p.Origin = "https://echo.example"
			x.Target = p
		}, ReasonTargetMismatch},
		{"custody route substituted", func(_ *fixture, x *Transmission, _ *[]byte) {
			p := x.Target.(PortalTarget)
			p.CustodyRoute = []byte("gate -> proxy.example -> api.anthropic.com")
			x.Target = p
		}, ReasonTargetMismatch},
		{"intermediary added", func(_ *fixture, x *Transmission, _ *[]byte) {
			p := x.Target.(PortalTarget)
			p.Intermediaries = []string{"https://relay.example"}
			x.Target = p
		}, ReasonTargetMismatch},
		{"origin canonical equal", func(_ *fixture, x *Transmission, _ *[]byte) {
			p := x.Target.(PortalTarget)
			p.Origin = "HTTPS://API.ANTHROPIC.COM:443"
			x.Target = p
		}, ""},
		{"purpose substituted", func(_ *fixture, x *Transmission, _ *[]byte) { x.Purpose = DiagnosticRecording }, ReasonPurposeMismatch},
		// The complete wire (issue 18 scope 1): method and every forwarded
		// header are bound, not only the body.
		{"method substituted", func(_ *fixture, x *Transmission, _ *[]byte) { x.Method = "PUT" }, ReasonWireMismatch},
		{"header value changed", func(_ *fixture, x *Transmission, _ *[]byte) {
			x.Headers = []Header{{"Anthropic-Version", "2023-01-01"}, {"X-Api-Key", CredentialPlaceholder}}
		}, ReasonWireMismatch},
		{"header added", func(_ *fixture, x *Transmission, _ *[]byte) {
			x.Headers = append(slices.Clone(x.Headers), Header{"X-Exfil", "1"})
		}, ReasonWireMismatch},
		{"header removed", func(_ *fixture, x *Transmission, _ *[]byte) { x.Headers = x.Headers[:1] }, ReasonWireMismatch},
		{"header moved into the name", func(_ *fixture, x *Transmission, _ *[]byte) {
			x.Headers = []Header{{"Anthropic-Version2023-06-01", ""}, {"X-Api-Key", CredentialPlaceholder}}
		}, ReasonWireMismatch},
		{"expired", func(f *fixture, _ *Transmission, _ *[]byte) { f.clock = f.clock.Add(31 * time.Second) }, ReasonExpired},
		{"policy revision changed", func(f *fixture, _ *Transmission, _ *[]byte) {
			c := baseConfig()
			c.DefaultClassification = 0.01
			st := f.d.cur.Load()
			f.d.SetPolicy(mustPolicy(f.t, c), st.src)
		}, ReasonPolicyChanged},
	}
	for _, tt := range tests {
		for _, text := range []string{"Public readme.", dealNotes} { // raw and filtered bases
			t.Run(tt.name, func(t *testing.T) {
				f := newFixture(t, baseConfig())
				x := tx(t, text)
				dec, wire, err := f.d.Decide(ctx, x)
				if err != nil {
					t.Fatal(err)
				}
				wire = append([]byte(nil), wire...)
				tt.mutate(f, &x, &wire)
				if got := reasonOf(f.d.Admit(ctx, dec, wire, x)); got != tt.want {
					t.Errorf("got %q want %q", got, tt.want)
				}
			})
		}
	}
}

// TestRetryConsumesAgain: each transmission (a retry of identical bytes
// included) settles its own decision and consumes; a decision admits
// once; with budget 1 the retry is refused.
func TestRetryConsumesAgain(t *testing.T) {
	ctx := context.Background()
	c := baseConfig()
	c.Purposes[ProviderRequest] = PurposeConfig{MaxUses: 1, MaxBytes: 1 << 20}
	f := newFixture(t, c)
	x := tx(t, "Public readme.")
	dec, wire, err := f.d.Decide(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.d.Admit(ctx, dec, wire, x); err != nil {
		t.Fatal(err)
	}
	if got := reasonOf(f.d.Admit(ctx, dec, wire, x)); got != ReasonSpent {
		t.Errorf("replayed decision: %q", got)
	}
	if _, err := f.d.Seal(ctx, x); reasonOf(err) != ReasonUsesExhausted {
		t.Errorf("retry: %v", err)
	}
	recs, _ := f.led.Records(ctx, 10)
	if len(recs) != 3 || recs[0].Effect != "allow" || recs[0].Bytes != int64(len(wire)) {
		t.Errorf("records %+v", recs)
	}
	for _, r := range recs {
		if !strings.HasPrefix(r.Evidence, "ed1:e1:") {
			t.Errorf("record evidence %q is not an EvidenceDigest@1", r.Evidence)
		}
	}
}

// TestDecisionCustody: a decision never marshals or prints its fields
// events carry only evidence digests.
func TestDecisionCustody(t *testing.T) {
	f := newFixture(t, baseConfig())
	x := tx(t, dealNotes)
	dec, _, err := f.d.Decide(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dec.MarshalJSON(); !errors.Is(err, ErrMarshal) {
		t.Error("MarshalJSON did not refuse")
	}
	if s := dec.String(); !strings.HasPrefix(s, "egress.Decision(") || len(s) > 40 {
		t.Errorf("String %q", s)
	}
	f.d.Seal(context.Background(), tx(t, "key="+syntheticKey()))
	for _, e := range f.events.Events() {
		for k, v := range e.IDs {
			if k != "decision" || !strings.HasPrefix(v, "ed1:") {
				t.Errorf("event id %s=%s", k, v)
			}
		}
		if strings.Contains(e.Detail+e.Reason, "Nightingale") || strings.Contains(e.Detail, "sk-ant") {
			t.Errorf("event leaks content: %+v", e)
		}
	}
}

// TestFilterReceiptsAndDeterminism: two runs give the same candidate and
// chain; the chain links each receipt to the previous one.
func TestFilterReceiptsAndDeterminism(t *testing.T) {
	f := newFixture(t, baseConfig())
	d1, w1, err1 := f.d.Decide(context.Background(), tx(t, dealNotes))
	d2, w2, err2 := f.d.Decide(context.Background(), tx(t, dealNotes))
	if err1 != nil || err2 != nil || string(w1) != string(w2) {
		t.Fatalf("not deterministic: %v %v", err1, err2)
	}
	e1, e2 := d1.Basis().(FilterEvidence), d2.Basis().(FilterEvidence)
	if !e1.complete() || e1.chain != e2.chain || e1.verification != e2.verification {
		t.Error("evidence differs or incomplete")
	}
	rs := e1.Receipts()
	if len(rs) != 2 || rs[1].Prev != rs[0].Digest || rs[0].In == rs[0].Out || rs[1].Out != e1.candidate {
		t.Errorf("receipts %+v", rs)
	}
}

// TestFilterFailsClosed: when unlabelled content is private by default
// the filter cannot verify a candidate and refuses; incomplete
// or expired filter evidence refuses at send time.
func TestFilterFailsClosed(t *testing.T) {
	c := baseConfig()
	c.DefaultClassification = 0.5
	f := newFixture(t, c)
	if _, err := f.d.Seal(context.Background(), tx(t, dealNotes)); reasonOf(err) != ReasonFilterFailed {
		t.Errorf("default-private: %v", err)
	}
	f = newFixture(t, baseConfig())
	x := tx(t, dealNotes)
	dec, wire, _ := f.d.Decide(context.Background(), x)
	ev := dec.basis.(FilterEvidence)
	ev.verification = [32]byte{}
	dec.basis = ev
	if got := reasonOf(f.d.Admit(context.Background(), dec, wire, x)); got != ReasonFilterExpired {
		t.Errorf("empty verification digest: %q", got)
	}
}

// TestHeadersDecidedLikeTheBody: forwarded header values are classified
// (issue 18 scope 1): a credential format refuses as a credential, a
// label at or above the portal threshold refuses (headers are never
// filtered), unlabelled values pass; nothing is consumed on a refusal.
func TestHeadersDecidedLikeTheBody(t *testing.T) {
	tests := []struct {
		name, value, want string
	}{
		{"plain beta flag", "fine-grained-tool-streaming-2025-05-14", ""},
		{"credential format", "x " + syntheticKey(), ReasonCategory},
		{"labelled content", "Nightingale", ReasonHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseConfig()
			c.Labels = append(c.Labels, LabelConfig{Name: "word", Patterns: []string{"Nightingale"}, Classification: 0.5, Category: Confidential})
			f := newFixture(t, c)
			x := tx(t, "Public readme.")
			x.Headers = append([]Header{{"Anthropic-Beta", tt.value}}, x.Headers...)
			_, err := f.d.Seal(context.Background(), x)
			if got := reasonOf(err); got != tt.want {
				t.Errorf("got %q want %q", got, tt.want)
			}
		})
	}
}
