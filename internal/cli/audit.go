package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/evidence"
	"github.com/coagent8/coagent8/internal/store"
)

// newAuditCmd is `coagent8 audit` (issue 10 scope 6; R-150): the security
// events and egress decisions, with every identifier as EvidenceDigest@1
// and no free-text detail, as JSON lines.
func newAuditCmd(a *app) *cobra.Command {
	var limit int
	c := &cobra.Command{
		Use:   "audit",
		Short: "List security events and egress decisions (identifiers as evidence digests only)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.audit(cmd, limit)
		},
	}
	c.Flags().IntVar(&limit, "limit", 200, "most recent entries of each kind")
	return c
}

// auditLine is one exported line: an event or a decision.
type auditLine struct {
	Kind string `json:"kind"` // "event" or "decision"
	event.Event
	Decision *ledger.Record `json:"decision,omitempty"`
}

func (a *app) audit(cmd *cobra.Command, limit int) error {
	dir := a.env.StateDir()
	key, err := evidence.LoadKey(filepath.Join(dir, "evidence.key"))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(a.io.Out)
	for _, e := range auditEvents(filepath.Join(dir, "events.jsonl"), key, limit) {
		enc.Encode(auditLine{Kind: "event", Event: e})
	}
	db, err := store.Open(cmd.Context(), filepath.Join(dir, "state.db"), 0)
	if err != nil {
		return err
	}
	defer db.Close()
	led, err := ledger.Open(cmd.Context(), db, nil)
	if err != nil {
		return err
	}
	recs, err := led.Records(cmd.Context(), limit)
	if err != nil {
		return err
	}
	for i := range recs {
		enc.Encode(auditLine{Kind: "decision", Decision: &recs[i]})
	}
	return nil
}

// auditEvents reads the last limit events, drops their free-text detail
// and replaces each identifier with its evidence digest.
func auditEvents(path string, key evidence.Key, limit int) []event.Event {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []event.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e event.Event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		e.Detail = ""
		e.IDs = digestIDs(e.IDs, key)
		out = append(out, e)
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out
}

func digestIDs(ids map[string]string, key evidence.Key) map[string]string {
	if len(ids) == 0 {
		return nil
	}
	names := make([]string, 0, len(ids))
	for k := range ids {
		names = append(names, k)
	}
	sort.Strings(names)
	out := map[string]string{}
	for _, k := range names {
		v := ids[k]
		if len(v) > 4 && v[:4] == "ed1:" {
			out[k] = v // already an evidence digest
			continue
		}
		out[k] = key.Digest(evidence.Domain{Consumer: "audit", Purpose: "security-events", Class: "event.id",
			Retention: "local"}, []byte(k), []byte(v))
	}
	return out
}
