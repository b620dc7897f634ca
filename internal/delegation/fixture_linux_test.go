//go:build linux && amd64

package delegation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/egress"
	egressledger "github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/evidence"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/sandbox"
	"github.com/coagent8/coagent8/internal/secret"
	"github.com/coagent8/coagent8/internal/store"
)

// realKey is a synthetic Anthropic key assembled at run time.
func realKey() string { return realKeyFor(gate.Anthropic) }

// realKeyFor is provider p's synthetic real key.
func realKeyFor(p gate.Provider) string {
	if p == gate.OpenAI {
		return "sk-proj-" + strings.Repeat("W", 24) + "canary" + strings.Repeat("3", 12)
	}
	return "sk-ant-api03-" + strings.Repeat("Q", 24) + "canary" + strings.Repeat("5", 12)
}

// newGate starts a gate in front of an Anthropic double.
func newGate(t testing.TB, upstream string) *gate.Gate {
	return newGateFor(t, gate.Anthropic, upstream)
}

// newGateFor starts a gate in front of upstream (provider p's double)
// with the real key behind env:REAL_KEY, as `coagent8 gate serve` builds
// it (egress decider over the state database).
func newGateFor(t testing.TB, p gate.Provider, upstream string) *gate.Gate {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	key, err := gate.LoadKey(filepath.Join(dir, "gate.key"))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := egress.NewPolicy(egress.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	led, err := egressledger.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	ekey, err := evidence.LoadKey(filepath.Join(dir, "evidence.key"))
	if err != nil {
		t.Fatal(err)
	}
	events := &event.Memory{}
	dec, err := egress.New(egress.Options{Policy: pol, Ledger: led, Key: ekey, Events: events, Principal: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := secret.ParseRef("env:REAL_KEY")
	g, err := gate.New(context.Background(), gate.Options{DB: db, Key: key, Egress: dec, Events: events,
		Secrets:     &secret.Resolver{Env: config.FromList([]string{"REAL_KEY=" + realKeyFor(p)})},
		Credentials: map[gate.Provider]secret.Ref{p: ref}, Redactor: redact.NewDiagnostic(""),
		Upstreams: map[gate.Provider]string{p: upstream}, UnsafeAllowLoopbackUpstream: true,
		DrainTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// grant issues an Anthropic grant for model.
func grant(t testing.TB, g *gate.Gate, model string) (gate.Grant, secret.Value) {
	return grantFor(t, g, gate.Anthropic, model)
}

// grantFor issues a grant for provider p and model and returns it and
// its phantom.
func grantFor(t testing.TB, g *gate.Gate, p gate.Provider, model string) (gate.Grant, secret.Value) {
	t.Helper()
	ref, _ := secret.ParseRef("env:REAL_KEY")
	gr, ph, err := g.Grant(context.Background(), gate.Spec{Provider: p, Model: model, Job: "job-delegation",
		TTL: time.Hour, Secret: ref, MaxRequests: 20, MaxTokens: 10_000_000, MaxSpend: gate.USD(100),
		Price: &gate.Price{InputPerMTok: 3, OutputPerMTok: 15, CacheWritePerMTok: 3.75, CacheReadPerMTok: 0.3}})
	if err != nil {
		t.Fatal(err)
	}
	return gr, ph
}

// newRunner is a runner over a sandbox that qualifies on first use in
// the package's shared state directory.
func newRunner(t testing.TB) *Runner {
	t.Helper()
	state := sharedState
	sb, err := sandbox.New(sandbox.Config{StateDir: state, AutoQualify: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(sb, state)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// qualify qualifies rt on r, failing the test unless it passes.
func qualify(t *testing.T, r *Runner, rt Runtime) Qualification {
	t.Helper()
	q, err := r.Qualify(testCtx(t), rt)
	if err != nil || !q.Passed {
		t.Fatalf("qualify %s: %+v, %v", rt.Executable, q, err)
	}
	return q
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// pinnedCLI returns <module root>/.tools/node_modules/.bin/name, failing
// (never skipping) when it is missing.
func pinnedCLI(t testing.TB, name string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("module root not found")
		}
		dir = filepath.Dir(dir)
	}
	p := filepath.Join(dir, ".tools", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("pinned %s missing at %s; install it with scripts/install.sh", name, p)
	}
	return p
}

// treeHash digests every path, type, mode, owner, mtime, symlink target
// and file content under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%q %v %d:%d %d\n", rel, fi.Mode(), st.Uid, st.Gid, st.Mtim.Nano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%x\n", sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
