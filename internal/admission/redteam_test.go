package admission

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
)

// TestAdmitCheckoutLinksAndShapes: checkouts a hostile candidate may meet
// (a directory or file replaced by a symbolic link to outside, a directory
// where the patch puts a file) are refused without writing, inside or
// outside the checkout.
func TestAdmitCheckoutLinksAndShapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		base    map[string]string
		edits   []edit
		prepare func(t *testing.T, ws, outside string)
	}{
		{"parent dir is a symlink out", map[string]string{"d/x.txt": "x\n"},
			[]edit{{path: "d/x.txt", content: "pwned\n"}},
			func(t *testing.T, ws, out string) {
				os.RemoveAll(filepath.Join(ws, "d"))
				writeFile(t, out, "x.txt", "x\n")
				os.Symlink(out, filepath.Join(ws, "d"))
			}},
		{"new file below a symlinked dir", map[string]string{"d/x.txt": "x\n"},
			[]edit{{path: "d/new.txt", content: "pwned\n"}},
			func(t *testing.T, ws, out string) {
				os.RemoveAll(filepath.Join(ws, "d"))
				os.Symlink(out, filepath.Join(ws, "d"))
			}},
		{"target is a symlink out", map[string]string{"a.txt": "a\n"},
			[]edit{{path: "a.txt", content: "pwned\n"}},
			func(t *testing.T, ws, out string) {
				writeFile(t, out, "a.txt", "a\n")
				os.Remove(filepath.Join(ws, "a.txt"))
				os.Symlink(filepath.Join(out, "a.txt"), filepath.Join(ws, "a.txt"))
			}},
		{"file target is a non-empty directory", map[string]string{"d/x.txt": "x\n"},
			[]edit{{path: "d/x.txt", del: true}, {path: "d", content: "file now\n"}},
			func(t *testing.T, ws, out string) { writeFile(t, ws, "d/untracked.txt", "mine\n") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.base)
			var id string
			if tc.name == "file target is a non-empty directory" {
				id = f.fileOverDir()
			} else {
				id = f.job(tc.edits...)
			}
			out := t.TempDir()
			tc.prepare(t, f.ws, out)
			before, beforeOut := snapshot(t, f.ws), snapshot(t, out)
			_, err := f.admit(id)
			if err == nil {
				t.Fatal("admitted")
			}
			t.Logf("refused: %v", err)
			if d := cmp.Diff(before, snapshot(t, f.ws)); d != "" {
				t.Errorf("refusal %v wrote the checkout:\n%s", err, d)
			}
			if d := cmp.Diff(beforeOut, snapshot(t, out)); d != "" {
				t.Errorf("refusal %v wrote outside:\n%s", err, d)
			}
			// The admitter still opens (no journal left that cannot finish).
			f.open()
		})
	}
}

// fileOverDir makes a job whose candidate replaces directory d (d/x.txt)
// by a file d.
func (f *fixture) fileOverDir() string {
	f.t.Helper()
	os.Remove(filepath.Join(f.ws, "d", "x.txt"))
	os.Remove(filepath.Join(f.ws, "d"))
	writeFile(f.t, f.ws, "d", "file now\n")
	gitRun(f.t, f.ws, "add", "-A")
	gitRun(f.t, f.ws, "commit", "-q", "-m", "tmp")
	patch := gitRun(f.t, f.ws, "diff", "--binary", "--full-index", f.base, "HEAD")
	gitRun(f.t, f.ws, "reset", "-q", "--hard", f.base)
	c := f.candidate()
	c.Patch = []byte(patch + "\n")
	j, err := f.jobs.Create(t0, jobSpec(f))
	if err != nil {
		f.t.Fatal(err)
	}
	c.Digest = digestOf(c.Patch)
	if _, err := f.jobs.Attach(t0, j.ID, jobCandidate(c)); err != nil {
		f.t.Fatal(err)
	}
	return j.ID
}

// TestAdmitConcurrentOnce: eight admissions of one job at once write it
// once; every other is refused.
func TestAdmitConcurrentOnce(t *testing.T) {
	f := newFixture(t, baseFiles)
	id := f.job(edit{path: "a.go", content: "package a\n"}, edit{path: "n.txt", content: "n\n"}, edit{path: "old.txt", del: true})
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = f.admit(id) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if fault.From(err) == nil {
			t.Errorf("untyped refusal %v", err)
		}
	}
	t.Logf("errs: %v", errs)
	if ok != 1 {
		t.Errorf("%d admissions succeeded, want 1: %v", ok, errs)
	}
}

var t0 = context.Background()

func digestOf(b []byte) string { return quarantine.Digest(b) }

type noRevoker struct{}

func (noRevoker) RevokeJob(context.Context, string) ([]string, error) { return nil, nil }

// TestAdmitRefusesJobQuarantinedMidway: the user quarantines (or rejects)
// the job while its admission is staging; the admission must not then
// write the now-tainted (or rejected) candidate without the acknowledgement.
func TestAdmitRefusesJobQuarantinedMidway(t *testing.T) {
	for _, tc := range []struct {
		name   string
		do     func(f *fixture, id string) error
		reason string
	}{
		{"quarantined", func(f *fixture, id string) error {
			_, err := f.jobs.Quarantine(t0, id, job.Containment{Revoker: noRevoker{}, Trigger: "operator", Actor: "u", Events: event.Discard{}})
			return err
		}, ReasonUnacknowledged},
		{"rejected", func(f *fixture, id string) error { return f.jobs.Reject(t0, id, "u") }, "admission.rejected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, baseFiles)
			id := f.job(edit{path: "a.go", content: "package a\n"})
			adm, err := New(t0, Options{Jobs: f.jobs, Env: f.adm.o.Env, StateDir: f.state, testOnlyStep: func(step int) {
				if step == stepPlanned {
					if err := tc.do(f, id); err != nil {
						t.Error(err)
					}
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, f.ws)
			_, err = adm.Admit(t0, Request{Job: id, Workspace: f.ws, Actor: "test"})
			if fe := fault.From(err); fe == nil || fe.Reason != tc.reason {
				t.Errorf("admission of a job %s midway: %v, want %s", tc.name, err, tc.reason)
			}
			if d := cmp.Diff(before, snapshot(t, f.ws)); d != "" {
				t.Errorf("the checkout was written:\n%s", d)
			}
			assertClean(t, f)
		})
	}
}
