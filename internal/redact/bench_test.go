//go:build unix

package redact

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCode measures the answer profile on up to 8 MiB of Go source.
func BenchmarkCode(b *testing.B) { benchCode(b, NewAnswer(), (*Redactor).Bytes) }

// BenchmarkCodeFullScan is BenchmarkCode without the prefilter (the scan
// from byte 0, as before it): the baseline of docs/PERFORMANCE.md's
// prefilter ratio, measured in the same run.
func BenchmarkCodeFullScan(b *testing.B) {
	benchCode(b, NewAnswer(), func(r *Redactor, p []byte) []byte { out, _ := r.redactFrom(p, 0); return out })
}

// BenchmarkCodeDiagnostic measures the diagnostic profile (keyword rules
// included: Go source is dense in ':' and '=') on the same corpus.
func BenchmarkCodeDiagnostic(b *testing.B) {
	benchCode(b, NewDiagnostic("/home/u"), (*Redactor).Bytes)
}

func benchCode(b *testing.B, r *Redactor, redact func(*Redactor, []byte) []byte) {
	root := filepath.Join(goroot(&testing.T{}), "src", "net")
	var pieces [][]byte
	size := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && size < 8<<20 {
			if data, err := os.ReadFile(p); err == nil {
				pieces, size = append(pieces, data), size+len(data)
			}
		}
		return nil
	})
	b.SetBytes(int64(size))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		for _, p := range pieces {
			redact(r, p)
		}
	}
	// CPU time, unlike wall time, is not inflated by other processes on a
	// shared machine.
	b.ReportMetric(float64(size)*float64(b.N)/1e6/(cpuTime()-cpu0).Seconds(), "cpuMB/s")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
