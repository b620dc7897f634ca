//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestGateConnectionsBounded: each connection the agent opens to the
// gate is a descriptor and a goroutine in the supervisor (the coagent8
// server), which the sandbox's limits do not bound. Nothing bounded how
// many the agent held at once: 4096 descriptors per process times the
// pids limit, enough to leave the server no descriptor for its own state
// or the user's other jobs. A job now has at most maxGateConns accepted
// at once; the rest wait in the kernel's backlog.
func TestGateConnectionsBounded(t *testing.T) {
	s := newTestSandbox(t)
	var mu sync.Mutex
	var open []net.Conn
	most := 0
	gate := func(ln net.Listener) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c) // held, as a slow or idle exchange is
			most = max(most, len(open))
			mu.Unlock()
		}
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	}()
	var out bytes.Buffer
	script := `for i in $(seq 400); do exec {fd}<>/dev/tcp/127.0.0.1/8080 || break; done; echo opened; sleep 30`
	j, err := s.admitAgent(AgentSpec{Spec: Spec{Path: "/usr/bin/bash", Args: []string{"-c", script}, Stdout: &out, Stderr: &out},
		GatePort: 8080, Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
	defer cancel()
	if _, err := s.runJob(ctx, j, "test"); err != nil {
		t.Fatalf("run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if most == 0 || most > maxGateConns {
		t.Errorf("the gate held %d of the agent's connections at once, want 1 to %d (opened: %v)", most, maxGateConns,
			strings.Contains(out.String(), "opened"))
	}
}
