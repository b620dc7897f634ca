//go:build bench

// Package consult benchmarks coagent8's consult path against the bare
// Claude Code invocation it wraps, against the same local provider double,
// in one run; and the MCP server's start-up latency and idle memory.
//
// Run: bash bench/consult/run.sh
package consult

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/providertest"
)

const rounds = 15

func buildBinary(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "coagent8")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "github.com/coagent8/coagent8/cmd/coagent8")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func TestConsultOverhead(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "benchmark answer", Chunks: 4}})
	bin, claude := buildBinary(t), clitest.Path(t, "claude")
	home, ws := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, ".coagent8"), 0o700)
	os.WriteFile(filepath.Join(home, ".coagent8", "config.json"), []byte(`{"governance":{"models":{"allow":["claude-sonnet-5-5"]}}}`), 0o600)
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "ANTHROPIC_BASE_URL=" + dbl.URL(),
		"ANTHROPIC_API_KEY=bench-key", "COAGENT8_API_KEY_BILLING=claude", "CLAUDE_PATH=" + claude,
		"COAGENT8_DIR=" + filepath.Join(home, ".coagent8")}
	bare := []string{"-p", "--restricted", "--tools", "Read,Glob,Grep", "--permission-mode", "dontAsk",
		"--permission-prompts", "none", "--settings", `{"disableAllHooks":true}`, "--strict-mcp-config",
		"--mcp-config", `{"mcpServers":{}}`, "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--model", "sonnet"}
	var tC, tB []time.Duration
	var peak int64
	for i := 0; i < rounds; i++ {
		d, rss := run(t, env, ws, bin, []string{"consult", "--backend", "claude", "--workspace", ws, "What is 2+2?"}, "")
		tC = append(tC, d)
		peak = max(peak, rss)
		d, _ = run(t, env, ws, claude, append(bare, "--session-id", uuid(i)), "What is 2+2?")
		tB = append(tB, d)
	}
	mc, mb := median(tC), median(tB)
	fmt.Printf("consult via coagent8: median %v over %d runs\n", mc.Round(time.Millisecond), rounds)
	fmt.Printf("bare claude -p:       median %v over %d runs\n", mb.Round(time.Millisecond), rounds)
	fmt.Printf("overhead: %+.1f %% of the bare median (target < 3 %%)\n", 100*float64(mc-mb)/float64(mb))
	_ = peak // rusage of a waited child includes its waited descendants (the CLI): see serverPeak
	fmt.Printf("coagent8 MCP server peak RSS (VmHWM) after %d consults: %.1f MiB\n", rounds, float64(serverPeak(t, bin, env, ws))/1024)
}

// serverPeak runs consults through one MCP server and returns its own
// high-water RSS in KiB (the CLI children are separate processes).
func serverPeak(t *testing.T, bin string, env []string, ws string) int64 {
	cmd := exec.Command(bin)
	cmd.Env = env
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := 0; i < rounds; i++ {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: map[string]any{
			"proposal": "What is 2+2?", "backend": "claude", "workspace_path": ws}})
		if err != nil || res.IsError {
			t.Fatalf("consult: %v %+v", err, res)
		}
	}
	return procField(cmd.Process.Pid, "VmHWM:")
}

// run executes one command and returns wall time and its own peak RSS
// (KiB, from rusage: children's memory is not included).
func run(t *testing.T, env []string, dir, bin string, args []string, stdin string) (time.Duration, int64) {
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, out.String())
	}
	d := time.Since(start)
	return d, maxRSS(cmd.ProcessState)
}

func uuid(i int) string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", time.Now().UnixNano()%1e9*100+int64(i))
}

func TestServerStartAndIdleMemory(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	var lat []time.Duration
	var rss int64
	for i := 0; i < 20; i++ {
		cmd := exec.Command(bin)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home}
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		start := time.Now()
		cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		if i == 0 {
			time.Sleep(500 * time.Millisecond) // idle
			rss = vmRSS(cmd.Process.Pid)
		}
		cs.Close()
	}
	fmt.Printf("process start to tools/list answered: median %v (target < 20 ms; Node MCP servers measured 165-260 ms)\n", median(lat).Round(100*time.Microsecond))
	fmt.Printf("idle MCP server RSS: %.1f MiB (target < 15 MiB; Node MCP servers measured 68-145 MiB)\n", float64(rss)/1024)
}

func vmRSS(pid int) int64 { return procField(pid, "VmRSS:") }

func procField(pid int, field string) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}
