// Package admission benchmarks issue 16's admission target ("admission of
// a 10-file patch into a 100,000-file checkout ≤ 100 ms") against `git
// apply` of the same patch into the same checkout, interleaved in one run.
//
//	go test -run '^$' -bench . -benchtime 1x ./bench/admission
//	ADMISSION_FILES=20000 go test -run '^$' -bench . ./bench/admission
//
// Each round resets the ten files to the base (untimed), admits a fresh
// job's candidate through admission.Admitter.Admit (timed: plan in a
// scratch index, stage, journal, roll forward, job row, event), resets,
// and times `git apply` of the patch. Reported: the medians and their
// ratio.
package admission

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/admission"
	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/gitrepo"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/store"
)

const rounds = 15

type fixture struct {
	ws, state, patchFile string
	base                 string
	cand                 *quarantine.Candidate
	edited               []string
	err                  error
}

var (
	once sync.Once
	fx   fixture
)

func git(dir string, stdin string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.invalid",
		"GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.invalid", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// setup generates files small files in 1,000 directories, commits them,
// and builds the candidate that edits ten of them.
func setup(root string, files int) (f fixture) {
	f.ws, f.state = filepath.Join(root, "ws"), filepath.Join(root, "state")
	for i := range files {
		d := filepath.Join(f.ws, fmt.Sprintf("d%03d", i%1000))
		if i < 1000 {
			if f.err = os.MkdirAll(d, 0o755); f.err != nil {
				return
			}
		}
		body := fmt.Sprintf("package p\n\n// file %d\nfunc F%d() int {\n\treturn %d\n}\n", i, i, i)
		if f.err = os.WriteFile(filepath.Join(d, fmt.Sprintf("f%06d.go", i)), []byte(body), 0o644); f.err != nil {
			return
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "base"}} {
		if _, f.err = git(f.ws, "", args...); f.err != nil {
			return
		}
	}
	f.base, _ = git(f.ws, "", "rev-parse", "HEAD")
	up := filepath.Join(root, "upper")
	var changes []candidate.Change
	for k := range 10 {
		i := k * (files / 10)
		p := fmt.Sprintf("d%03d/f%06d.go", i%1000, i)
		f.edited = append(f.edited, p)
		os.MkdirAll(filepath.Join(up, filepath.Dir(p)), 0o755)
		body := fmt.Sprintf("package p\n\n// file %d, edited\nfunc F%d() int {\n\treturn %d + 1\n}\n", i, i, i)
		os.WriteFile(filepath.Join(up, p), []byte(body), 0o644)
		changes = append(changes, candidate.Change{Path: p, Kind: candidate.Modified, Mode: 0o644, OldMode: 0o644})
	}
	slices.SortFunc(changes, func(a, b candidate.Change) int { return strings.Compare(a.Path, b.Path) })
	repo, err := gitrepo.Open(context.Background(), config.FromOS(), f.ws)
	if f.err = err; err != nil {
		return
	}
	f.cand, f.err = quarantine.Build(context.Background(), quarantine.Input{Repo: repo, Base: f.base, Upper: up, Changes: changes})
	if f.err == nil {
		f.patchFile = filepath.Join(root, "p.patch")
		f.err = os.WriteFile(f.patchFile, f.cand.Patch, 0o600)
	}
	return
}

func (f *fixture) reset() error {
	_, err := git(f.ws, "", append([]string{"checkout", "--"}, f.edited...)...)
	return err
}

func BenchmarkAdmit10Files(b *testing.B) {
	files := 100_000
	if v, err := strconv.Atoi(os.Getenv("ADMISSION_FILES")); err == nil && v >= 10 {
		files = v
	}
	once.Do(func() {
		root, err := os.MkdirTemp("", "admissionbench-")
		if err != nil {
			fx.err = err
			return
		}
		t0 := time.Now()
		fx = setup(root, files)
		fmt.Printf("checkout: %d files generated and committed in %.1f s\n", files, time.Since(t0).Seconds())
	})
	if fx.err != nil {
		b.Fatal(fx.err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(fx.state, "state.db"), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	jobs, err := job.Open(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	adm, err := admission.New(ctx, admission.Options{Jobs: jobs, Env: config.FromOS(), StateDir: fx.state})
	if err != nil {
		b.Fatal(err)
	}
	var admit, apply []time.Duration
	b.ResetTimer()
	for b.Loop() {
		for range rounds {
			admit = append(admit, timeAdmit(b, ctx, jobs, adm))
			apply = append(apply, timeApply(b))
		}
	}
	ma, mg := median(admit), median(apply)
	b.ReportMetric(float64(ma.Microseconds())/1000, "admit-ms")
	b.ReportMetric(float64(mg.Microseconds())/1000, "gitapply-ms")
	b.ReportMetric(float64(ma)/float64(mg), "ratio")
}

func timeAdmit(b *testing.B, ctx context.Context, jobs *job.Store, adm *admission.Admitter) time.Duration {
	b.StopTimer()
	if err := fx.reset(); err != nil {
		b.Fatal(err)
	}
	j, err := jobs.Create(ctx, job.Spec{Workspace: fx.ws, Base: fx.base, Backend: "claude", Model: "m"})
	if err == nil {
		_, err = jobs.Attach(ctx, j.ID, job.Candidate{Patch: fx.cand.Patch, Digest: fx.cand.Digest})
	}
	if err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	t0 := time.Now()
	if _, err := adm.Admit(ctx, admission.Request{Job: j.ID, Workspace: fx.ws, Actor: "bench"}); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

func timeApply(b *testing.B) time.Duration {
	b.StopTimer()
	if err := fx.reset(); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	t0 := time.Now()
	if _, err := git(fx.ws, "", "apply", fx.patchFile); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
