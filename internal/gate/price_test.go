package gate

import (
	"context"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/providertest"
)

// TestLongContextMetered: a request whose total input (cache reads
// included) is above the long-context threshold is charged at the tier's
// rates, one at or below it at the base rates; the reservation covers
// both (issue 18 scope 5).
func TestLongContextMetered(t *testing.T) {
	price := Price{InputPerMTok: 3, OutputPerMTok: 15, CacheWritePerMTok: 3.75, CacheReadPerMTok: 0.3,
		LongContextTokens: 1000, LongInputPerMTok: 6, LongOutputPerMTok: 22.5, LongCacheWritePerMTok: 7.5, LongCacheReadPerMTok: 0.6}
	tests := []struct {
		name                  string
		input, cacheRead, out int64
		long                  bool
	}{
		{"below the threshold", 900, 0, 50, false},
		{"at the threshold", 1000, 0, 50, false},
		{"above it", 1500, 0, 50, true},
		{"above it through cache reads", 500, 800, 50, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.anth.Script(providertest.Reply{InputTokens: tt.input, CacheReadInputTokens: tt.cacheRead, OutputTokens: tt.out})
			s := spec(Anthropic)
			s.Price = &price
			gr, phantom := f.grant(s)
			readAll(t, f.call(Anthropic, phantom, gr.Model, true))
			g := f.settled(gr.ID)
			rates := price
			if tt.long {
				rates = Price{InputPerMTok: 6, OutputPerMTok: 22.5, CacheWritePerMTok: 7.5, CacheReadPerMTok: 0.6}
			}
			want := cost(tt.input, rates.InputPerMTok) + cost(tt.cacheRead, rates.CacheReadPerMTok) + cost(tt.out, rates.OutputPerMTok)
			if g.Used.Spend != want {
				t.Errorf("charged %d nano-USD, want %d (long tier %v)", g.Used.Spend, want, tt.long)
			}
			as := attempts(t, f, gr.ID)
			if len(as) != 1 || as[0].Outcome != OutcomeUsage {
				t.Errorf("attempts %+v, want one settled from usage within its reservation", as)
			}
		})
	}
}

// TestReservationCoversLongTier: a body that may cross the threshold is
// reserved at the dearer of both tiers.
func TestReservationCoversLongTier(t *testing.T) {
	p := Price{InputPerMTok: 3, OutputPerMTok: 15, LongContextTokens: 1000, LongInputPerMTok: 6, LongOutputPerMTok: 22.5}
	tests := []struct {
		bodyLen int
		want    Amount
	}{
		{900, Amount{Tokens: 1000, Spend: cost(900, 3) + cost(100, 15)}},
		{5000, Amount{Tokens: 5100, Spend: cost(5000, 6) + cost(100, 22.5)}},
	}
	for _, tt := range tests {
		if got := reservation(tt.bodyLen, 100, p); got != tt.want {
			t.Errorf("reservation(%d) = %+v, want %+v", tt.bodyLen, got, tt.want)
		}
	}
}

// TestLongTierBelowBaseRefused: a grant whose long-context tier prices a
// token class below its base rate is refused (gate.price). Above the
// threshold every class is charged at the tier's rates, so a tier given
// without its rates (`--price-long-context-tokens 1000` alone) charged
// nothing for every request the agent made longer than 1000 tokens: the
// spend budget never ran out.
func TestLongTierBelowBaseRefused(t *testing.T) {
	tests := []struct {
		name  string
		price Price
		want  string // "" = granted
	}{
		{"threshold without its rates", Price{InputPerMTok: 3, OutputPerMTok: 15, LongContextTokens: 1000}, "gate.price"},
		{"long output below base", Price{InputPerMTok: 3, OutputPerMTok: 15, LongContextTokens: 1000, LongInputPerMTok: 6, LongOutputPerMTok: 1}, "gate.price"},
		{"long cache read below base", Price{InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.3, LongContextTokens: 1000,
			LongInputPerMTok: 6, LongOutputPerMTok: 22.5}, "gate.price"},
		{"dearer tier", Price{InputPerMTok: 3, OutputPerMTok: 15, LongContextTokens: 1000, LongInputPerMTok: 6, LongOutputPerMTok: 22.5}, ""},
		{"no tier", Price{InputPerMTok: 3, OutputPerMTok: 15}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			s := spec(Anthropic)
			s.Price = &tt.price
			_, _, err := f.gate.Grant(context.Background(), s)
			if got := fault.From(err); (got == nil) != (tt.want == "") || got != nil && got.Reason != tt.want {
				t.Errorf("Grant: %v, want reason %q", err, tt.want)
			}
		})
	}
}
