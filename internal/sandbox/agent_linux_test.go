//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
)

// agentInsideArg is argv[1] of the test binary run inside an agent
// sandbox: it tries every way out and prints what happened as JSON.
const agentInsideArg = "__coagent8_agent_inside__"

// agentInsidePath is where the test binary is bound inside.
const agentInsidePath = "/job/agentprobe"

func init() {
	if len(os.Args) > 2 && os.Args[1] == agentInsideArg {
		os.Exit(agentInside(os.Args[2]))
	}
}

// agentAttempts is what the inside probe is asked to try.
type agentAttempts struct {
	GatePort int      `json:"gate_port"`
	TCP      []string `json:"tcp"`   // host loopback listeners
	UDP      []string `json:"udp"`   // host UDP listeners
	Unix     []string `json:"unix"`  // host socket paths and @abstract names
	Reads    []string `json:"reads"` // host paths that must stay unreadable
}

// agentInside runs inside the sandbox. Each result is "ok: …" or the
// error the attempt got.
func agentInside(arg string) int {
	var a agentAttempts
	if err := json.Unmarshal([]byte(arg), &a); err != nil {
		fmt.Println(err)
		return 2
	}
	res := map[string]string{}
	res["gate"] = httpGet(fmt.Sprintf("http://127.0.0.1:%d/probe", a.GatePort))
	for _, addr := range a.TCP {
		res["tcp "+addr] = dial("tcp", addr)
	}
	for _, addr := range a.UDP {
		res["udp "+addr] = udpSend(addr)
	}
	for _, p := range a.Unix {
		res["unix "+p] = dial("unix", p)
	}
	for _, p := range a.Reads {
		_, err := os.ReadFile(p)
		res["read "+p] = outcome(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := (&net.Resolver{PreferGo: true}).LookupHost(ctx, "coagent8-probe.example.com")
	res["dns go"] = outcome(err)
	_, err = net.DefaultResolver.LookupHost(ctx, "coagent8-probe.example.org")
	res["dns libc"] = outcome(err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		ln.Close()
	}
	res["bind"] = outcome(err)
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return 0
}

func httpGet(url string) string {
	c := &http.Client{Timeout: 5 * time.Second}
	r, err := c.Get(url)
	if err != nil {
		return err.Error()
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return "ok: " + r.Status + " " + string(b)
}

func dial(network, addr string) string {
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err == nil {
		_, _ = c.Write([]byte("escaped\n"))
		c.Close()
	}
	return outcome(err)
}

func udpSend(addr string) string {
	c, err := net.Dial("udp", addr)
	if err == nil {
		_, err = c.Write([]byte("escaped"))
		c.Close()
	}
	return outcome(err)
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// countingTCP listens on 127.0.0.1 (port 0 = any) and counts connections.
func countingTCP(t *testing.T, addr string) (net.Listener, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln, &n
}

// countingUnix listens on a unix socket (path or @abstract).
func countingUnix(t *testing.T, addr string) *atomic.Int64 {
	t.Helper()
	ln, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return &n
}

// TestAgentNetworkIsTheGateOnly: from inside an agent sandbox the gate is
// reachable at 127.0.0.1:GatePort, and nothing else is: not a provider
// double's port on the host's loopback, not another host loopback
// listener (one of them on the gate's own port number, so the port is not
// what separates them), not UDP or DNS, not a host socket path or an
// abstract socket; the host HOME, ~/.claude, ~/.codex, the state directory
// a gate key file and the job roots are unreadable; the agent cannot
// listen. Every
// listener outside sees nothing (issue 15 scope 2).
func TestAgentNetworkIsTheGateOnly(t *testing.T) {
	s := newTestSandbox(t)
	double, doubleN := countingTCP(t, "127.0.0.1:0")
	twin, twinN := countingTCP(t, "127.0.0.1:0") // host listener on the gate's port number
	gatePort := twin.Addr().(*net.TCPAddr).Port
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	var udpN atomic.Int64
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			udpN.Add(1)
		}
	}()
	sockDir := t.TempDir()
	sockPath := filepath.Join(sockDir, "host.sock")
	abstract := "@coagent8-agent-probe-" + newJobID()
	pathN, abstractN := countingUnix(t, sockPath), countingUnix(t, abstract)

	home := t.TempDir() // a stand-in host home with the CLIs' logins
	canary := "synthetic-canary-" + newJobID()
	reads := []string{filepath.Join(home, ".claude", ".credentials.json"), filepath.Join(home, ".codex", "auth.json"),
		filepath.Join(s.cfg.StateDir, "gate.key")}
	for _, p := range reads {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(canary), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		reads = append(reads, h, filepath.Join(h, ".claude"), filepath.Join(h, ".codex"))
	}
	// Another job's root: every job root lives under JobsDir.
	reads = append(reads, s.cfg.StateDir, s.cfg.JobsDir)

	var gateN atomic.Int64
	gate := func(ln net.Listener) {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			gateN.Add(1)
			fmt.Fprint(w, "gate")
		}))
	}
	attempts := agentAttempts{GatePort: gatePort,
		TCP:   []string{double.Addr().String(), "127.0.0.1:" + strconv.Itoa(gatePort+1), "[::1]:" + strconv.Itoa(gatePort)},
		UDP:   []string{udp.LocalAddr().String(), "127.0.0.1:53", "8.8.8.8:53"},
		Unix:  []string{sockPath, abstract},
		Reads: reads}
	arg, _ := json.Marshal(attempts)
	res, r := runAgentProbe(t, s, AgentSpec{GatePort: gatePort, Gate: gate}, string(arg))
	if r.Profile != ProfileAgent || r.PolicyDigest == policyDigest() {
		t.Errorf("receipt profile %q policy %s, want %q and an agent policy digest", r.Profile, r.PolicyDigest, ProfileAgent)
	}
	if got, want := res["gate"], "ok: 200 OK gate"; got != want {
		t.Errorf("gate from inside: got %q, want %q", got, want)
	}
	delete(res, "gate")
	for k, v := range res {
		if v == "ok" || strings.Contains(v, canary) {
			t.Errorf("%s from inside succeeded (%q), want a failure", k, v)
		} else {
			t.Logf("%s: %s", k, v)
		}
	}
	got := map[string]int64{"gate": gateN.Load(), "double": doubleN.Load(), "twin": twinN.Load(), "udp": udpN.Load(),
		"unix path": pathN.Load(), "abstract": abstractN.Load()}
	want := map[string]int64{"gate": 1, "double": 0, "twin": 0, "udp": 0, "unix path": 0, "abstract": 0}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("what the listeners saw (-want +got):\n%s", d)
	}
}

// runAgentProbe runs the test binary inside an agent sandbox with arg and
// returns its report and the receipt.
func runAgentProbe(t *testing.T, s *Sandbox, spec AgentSpec, arg string) (map[string]string, Receipt) {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	spec.Path = "/usr/bin/true" // admitted, then replaced by the bound test binary
	var out, errb bytes.Buffer
	spec.Stdout, spec.Stderr = &out, &errb
	j, err := s.admitAgent(spec)
	if err != nil {
		t.Fatal(err)
	}
	j.path, j.args = agentInsidePath, []string{agentInsideArg, arg}
	j.binds = append(j.binds, bind{Src: exe, Dst: agentInsidePath})
	r, err := s.runJob(testCtx(t), j, "test")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !r.Exit.Success() {
		t.Fatalf("probe exit %+v\nstdout %s\nstderr %s", r.Exit, out.String(), errb.String())
	}
	res := map[string]string{}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res); err != nil {
		t.Fatalf("probe report %q: %v (stderr %s)", out.String(), err, errb.String())
	}
	return res, r
}

// TestAgentAdmission: an agent run without a gate, or with a gate port
// outside [1024, 65535], is refused before anything starts.
func TestAgentAdmission(t *testing.T) {
	s := newTestSandbox(t)
	serve := func(net.Listener) {}
	for name, spec := range map[string]AgentSpec{
		"no gate":      {Spec: Spec{Path: "/usr/bin/true"}},
		"privileged":   {Spec: Spec{Path: "/usr/bin/true"}, GatePort: 443, Gate: serve},
		"out of range": {Spec: Spec{Path: "/usr/bin/true"}, GatePort: 70000, Gate: serve},
		"negative":     {Spec: Spec{Path: "/usr/bin/true"}, GatePort: -1, Gate: serve},
	} {
		_, err := s.RunAgent(context.Background(), spec)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.InvalidInput || fe.Reason != "sandbox.gate" {
			t.Errorf("%s: err %v, want InvalidInput sandbox.gate", name, err)
		}
	}
}
