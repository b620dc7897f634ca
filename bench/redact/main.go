// Command redactbench compares coagent8's redactor with gitleaks v8's
// detector on the same corpora in one run (issue 4 "Performance"). It is
// its own module so the product never depends on gitleaks.
//
// Corpora:
//   - code: the Go standard library's .go files (ordinary code, no secrets)
//   - dense: synthetic text with a credential every ~150 bytes
//
// Usage: go run . [-code-mib 16] [-dense-mib 2] [-min-time 1s]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

func main() {
	codeMiB := flag.Int("code-mib", 16, "MiB of Go source in the code corpus")
	denseMiB := flag.Int("dense-mib", 2, "MiB of the token-dense corpus")
	minTime := flag.Duration("min-time", time.Second, "minimum measuring time per row for our redactor")
	flag.Parse()

	gl, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gitleaks:", err)
		os.Exit(1)
	}
	gl.IgnoreGitleaksAllow = true // notes §6: otherwise a comment hides findings

	corpora := []struct {
		name   string
		pieces [][]byte
	}{
		{"code", goSource(*codeMiB << 20)},
		{"dense", dense(*denseMiB << 20)},
	}
	r := redact.NewAnswer()
	fmt.Printf("%-6s %-22s %10s %12s %12s %10s\n", "corpus", "engine", "MB/s", "allocs/MB", "bytes/MB", "findings")
	for _, c := range corpora {
		size := total(c.pieces)
		one := measure(size, *minTime, func() int {
			n := 0
			for _, p := range c.pieces {
				n += bytes.Count(r.Bytes(p), marker)
			}
			return n
		})
		stream := measure(size, *minTime, func() int {
			for _, p := range c.pieces {
				w := r.Writer(io.Discard)
				for i := 0; i < len(p); i += 64 {
					w.Write(p[i:min(i+64, len(p))])
				}
				w.Close()
			}
			return -1
		})
		base := measure(size, 0, func() int {
			n := 0
			for _, p := range c.pieces {
				n += len(gl.DetectBytes(p))
			}
			return n
		})
		for _, row := range []struct {
			name string
			m    result
		}{{"coagent8 one-shot", one}, {"coagent8 stream/64B", stream}, {"gitleaks v8.30.1", base}} {
			fmt.Printf("%-6s %-22s %10.1f %12.1f %12.0f %10d\n", c.name, row.name, row.m.mbps, row.m.allocsPerMB, row.m.bytesPerMB, row.m.findings)
		}
		fmt.Printf("%-6s ratio one-shot/gitleaks %.0fx, stream/gitleaks %.0fx (%.1f MiB in %d pieces)\n\n",
			c.name, one.mbps/base.mbps, stream.mbps/base.mbps, float64(size)/(1<<20), len(c.pieces))
	}
}

var marker = []byte("[REDACTED:")

type result struct {
	mbps, allocsPerMB, bytesPerMB float64
	findings                      int
}

// measure runs f until minTime has passed (at least once) and reports
// throughput and allocations per MB (1e6 bytes) of input.
func measure(size int, minTime time.Duration, f func() int) result {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	runs, found := 0, 0
	for runs == 0 || time.Since(start) < minTime {
		found = f()
		runs++
	}
	el := time.Since(start)
	runtime.ReadMemStats(&after)
	mb := float64(size) * float64(runs) / 1e6
	return result{
		mbps:        mb / el.Seconds(),
		allocsPerMB: float64(after.Mallocs-before.Mallocs) / mb,
		bytesPerMB:  float64(after.TotalAlloc-before.TotalAlloc) / mb,
		findings:    found,
	}
}

func total(ps [][]byte) int {
	n := 0
	for _, p := range ps {
		n += len(p)
	}
	return n
}

// goSource returns .go files of $GOROOT/src, one piece per file, up to limit bytes.
func goSource(limit int) [][]byte {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		panic(err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	var ps [][]byte
	n := 0
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || n >= limit {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && len(b) > 0 {
			ps, n = append(ps, b), n+len(b)
		}
		return nil
	})
	return ps
}

// dense returns synthetic answer-like text with a credential every ~150
// bytes, cut into 64 KiB pieces.
func dense(limit int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the key is set in config and then used for the request to the api so please rotate it now")
	var b strings.Builder
	for b.Len() < limit {
		cs := redacttest.Generate(rng)
		for _, c := range cs {
			for range 3 + rng.IntN(8) {
				b.WriteString(words[rng.IntN(len(words))] + " ")
			}
			b.WriteString("`" + c.Text + "`.\n")
		}
	}
	s := []byte(b.String()[:limit])
	var ps [][]byte
	for i := 0; i < len(s); i += 64 << 10 {
		ps = append(ps, s[i:min(i+64<<10, len(s))])
	}
	return ps
}
