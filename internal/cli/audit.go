package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/coagent8/coagent8/internal/allowance"
	"os"
	"path/filepath"
	"sort"
	"time"

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
	c.Flags().IntVar(&limit, "limit", 200, "most recent entries of each kind (0 or more)")
	return c
}

// eventLine is one exported security event.
type eventLine struct {
	Kind string `json:"kind"` // "event"
	event.Event
}

// decisionLine is one exported egress decision; Time repeats the
// decision's so every line can be sorted by the same two fields.
type decisionLine struct {
	Kind     string        `json:"kind"` // "decision"
	Time     time.Time     `json:"time"`
	Decision ledger.Record `json:"decision"`
}

func (a *app) audit(cmd *cobra.Command, limit int) error {
	if limit < 0 {
		return badUsage("flag.invalid", "--limit %d: use 0 or more", limit)
	}
	dir := a.env.StateDir()
	key, err := evidence.LoadKey(filepath.Join(dir, "evidence.key"))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(a.io.Out)
	events := auditEvents(filepath.Join(dir, "events.jsonl"), key, limit)
	// A failed write ends the export: a reader that went away
	// (`coagent8 audit | head -1`) is not written to line after line.
	for _, e := range events {
		if err := enc.Encode(eventLine{Kind: "event", Event: e}); err != nil {
			return fmt.Errorf("audit: write: %w", err)
		}
	}
	recs, err := auditDecisions(cmd.Context(), dir, limit)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := enc.Encode(decisionLine{Kind: "decision", Time: r.Time, Decision: r}); err != nil {
			return fmt.Errorf("audit: write: %w", err)
		}
	}
	if len(events)+len(recs) == 0 && limit > 0 {
		a.printf(a.io.Err, "coagent8: no security events or decisions recorded in %s\n", dir)
	}
	return nil
}

// auditDecisions reads the last limit egress decisions from the state
// database.
func auditDecisions(ctx context.Context, dir string, limit int) ([]ledger.Record, error) {
	db, err := store.Open(ctx, filepath.Join(dir, "state.db"), 0)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	led, err := ledger.Open(ctx, db, nil)
	if err != nil {
		return nil, err
	}
	return led.Records(ctx, limit)
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

// plainIDs are the event ids that are values, not identifiers: a run's
// exit status and how many records a limit left out. Digested, audit
// could show neither (a sandbox run's exit, a flood's size); each stays
// plain only while it has a value's form (plainValue).
var plainIDs = map[string]bool{"exit_code": true, "exit_class": true, allowance.IDSuppressed: true}

// plainID reports whether id k with value v is shown as it is.
func plainID(k, v string) bool {
	if !plainIDs[k] || len(v) == 0 || len(v) > 32 {
		return false
	}
	for _, r := range v {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// digestIDs replaces each identifier of ids with its evidence digest;
// [plainIDs] stay as they are.
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
		if plainID(k, v) {
			out[k] = v
			continue
		}
		out[k] = key.Digest(evidence.Domain{Consumer: "audit", Purpose: "security-events", Class: "event.id",
			Retention: "local"}, []byte(k), []byte(v))
	}
	return out
}
