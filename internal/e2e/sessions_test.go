package e2e

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// slowReply streams for about seconds s.
func slowReply(s int) providertest.Reply {
	return providertest.Reply{Text: strings.Repeat("slow streamed answer ", 20*s), Chunks: 20 * s, ChunkDelay: 50 * time.Millisecond}
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return structured(t, res), res
}

// streaming waits until the double is streaming a messages request.
func streaming(t *testing.T, dbl *providertest.Anthropic, after int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, r := range dbl.Requests()[min(after, len(dbl.Requests())):] {
			if strings.HasSuffix(r.Path, "/messages") && !r.Completed {
				return
			}
		}
	}
	t.Fatal("the double never started streaming")
}

func errorCode(sc map[string]any) string {
	e, _ := sc["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func TestTwoTurnContinuationReachesTheDouble(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Replies: []providertest.Reply{{Text: "First answer: use a mutex."}}, Default: providertest.Reply{Text: "Second answer."}})
	cs := connect(t, env(t, dbl.URL()))
	ws := t.TempDir()
	one, _ := call(t, cs, "consult", map[string]any{"proposal": "alpha question about maps", "backend": "claude", "workspace_path": ws})
	h, _ := one["sessionHandle"].(string)
	if one["status"] != "completed" || h == "" || one["continuationAvailable"] != true {
		t.Fatalf("turn one = %v", one)
	}
	n := len(dbl.Requests())
	two, _ := call(t, cs, "consult", map[string]any{"proposal": "beta follow-up", "backend": "claude", "workspace_path": ws, "session_handle": h})
	if two["status"] != "completed" || two["sessionHandle"] != h || two["turn"] != 2.0 {
		t.Fatalf("turn two = %v", two)
	}
	seen := false
	for _, r := range dbl.Requests()[n:] {
		b := string(r.Body)
		seen = seen || (strings.Contains(b, "beta follow-up") && strings.Contains(b, "alpha question about maps") && strings.Contains(b, "First answer: use a mutex."))
	}
	if !seen {
		t.Fatal("the double did not see turn one in the second turn's request")
	}
	page, _ := call(t, cs, "session", map[string]any{"action": "history", "workspace_path": ws, "session_handle": h})
	if evs, _ := page["events"].([]any); len(evs) != 4 || page["complete"] != true {
		t.Fatalf("history = %v", page)
	}
}

func TestBackgroundTurnReturnsAtOnceAndPollsToTheAnswer(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: slowReply(2)})
	cs := connect(t, env(t, dbl.URL()))
	ws := t.TempDir()
	// Governance resolves the effective model by a metadata-only CLI probe
	// (cached); the background split comes after it, so warm it up first.
	warm, _ := call(t, cs, "consult", map[string]any{"proposal": "warm", "backend": "claude", "workspace_path": ws, "wait": false})
	if warm["status"] != "running" {
		t.Fatalf("warm-up = %v", warm)
	}
	start := time.Now()
	sc, _ := call(t, cs, "consult", map[string]any{"proposal": "background please", "backend": "claude", "workspace_path": ws, "wait": false})
	t.Logf("wait:false answered in %v", time.Since(start))
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("wait:false answered after %v > 100 ms", took)
	}
	h, _ := sc["sessionHandle"].(string)
	if sc["status"] != "running" || h == "" {
		t.Fatalf("background answer = %v", sc)
	}
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		res, _ := call(t, cs, "session", map[string]any{"action": "result", "workspace_path": ws, "session_handle": h})
		if res["status"] == "running" {
			continue
		}
		if res["status"] != "completed" || !strings.HasPrefix(res["output"].(string), "slow streamed answer") {
			t.Fatalf("result = %v", res)
		}
		return
	}
	t.Fatal("the background turn never finished")
}

func TestCancelStreamingFinishedAndFromAnotherConnection(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: slowReply(30)})
	environ := env(t, dbl.URL())
	a, b := connect(t, environ), connect(t, environ)
	ws := t.TempDir()

	var wg sync.WaitGroup
	var answered map[string]any
	wg.Add(1)
	go func() { // the call being cancelled must itself get an answer
		defer wg.Done()
		res, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: map[string]any{
			"proposal": "long one", "backend": "claude", "workspace_path": ws}})
		if err != nil {
			t.Errorf("cancelled consult: %v", err)
			return
		}
		answered = structured(t, res)
	}()
	streaming(t, dbl, 0)
	list, _ := call(t, b, "session", map[string]any{"action": "list", "workspace_path": ws})
	sessions, _ := list["sessions"].([]any)
	if len(sessions) != 1 {
		t.Fatalf("list from B = %v", list)
	}
	h := sessions[0].(map[string]any)["sessionHandle"].(string)

	other := t.TempDir() // workspace isolation: another workspace sees nothing
	if l, _ := call(t, b, "session", map[string]any{"action": "list", "workspace_path": other}); len(l["sessions"].([]any)) != 0 {
		t.Fatalf("list from another workspace = %v", l)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"cancel", map[string]any{"session_handle": h, "workspace_path": other}},
		{"session", map[string]any{"action": "history", "session_handle": h, "workspace_path": other}},
	} {
		if sc, res := call(t, b, c.tool, c.args); !res.IsError || errorCode(sc) != "SESSION_INVALID" {
			t.Fatalf("%s from another workspace = %v", c.tool, sc)
		}
	}

	start := time.Now()
	got, _ := call(t, b, "cancel", map[string]any{"session_handle": h, "workspace_path": ws})
	if got["cancelled"] != true {
		t.Fatalf("cancel = %v", got)
	}
	wg.Wait()
	if answered["status"] != "cancelled" || time.Since(start) > 10*time.Second {
		t.Fatalf("cancelled call answered %v after %v", answered, time.Since(start))
	}
	again, _ := call(t, a, "cancel", map[string]any{"session_handle": h, "workspace_path": ws})
	if again["cancelled"] != false || again["message"] == "" {
		t.Fatalf("cancel of a finished turn = %v", again)
	}
}

func TestProgressNotificationsOnlyWithAToken(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: slowReply(3)})
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, r.Params)
			mu.Unlock()
		}})
	cmd := exec.Command(binary)
	cmd.Env = env(t, dbl.URL())
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ws := t.TempDir()
	args := map[string]any{"proposal": "progress please", "backend": "claude", "workspace_path": ws, "session_mode": "none"}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: args}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(got) != 0 {
		t.Fatalf("%d progress notifications without a token", len(got))
	}
	mu.Unlock()
	p := &mcp.CallToolParams{Name: "consult", Arguments: args}
	p.SetProgressToken("tok-1")
	if _, err := cs.CallTool(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 2 {
		t.Fatalf("%d progress notifications for a ~3 s turn, want several", len(got))
	}
	for i, n := range got {
		if n.ProgressToken != "tok-1" || n.Progress != float64(i+1) || len(n.Message) > 512 || n.Message == "" {
			t.Fatalf("notification %d = %+v", i, n)
		}
	}
}

// descendants returns pid's descendant processes with their start times.
func descendants(pid int) map[int]string {
	children := map[int][]int{}
	starts := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
		starts[p] = f[19]
	}
	out := map[int]string{}
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out[c] = starts[c]
			walk(c)
		}
	}
	walk(pid)
	return out
}

func alive(pid int, start string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	return f[19] == start && f[0] != "Z"
}

// kill -9 of the server mid-turn: no backend survives, and the next server
// opens the database, shows the turn failed/server_exit, earlier turns intact.
func TestServerKilledMidTurnLeavesNoSurvivorsAndRecovers(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Replies: []providertest.Reply{{Text: "earlier answer"}}, Default: slowReply(60)})
	environ := env(t, dbl.URL())
	ws := t.TempDir()
	cmd := exec.Command(binary)
	cmd.Env = environ
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := call(t, cs, "consult", map[string]any{"proposal": "first", "backend": "claude", "workspace_path": ws})
	h := one["sessionHandle"].(string)
	n := len(dbl.Requests())
	bg, _ := call(t, cs, "consult", map[string]any{"proposal": "second", "backend": "claude", "workspace_path": ws, "session_handle": h, "wait": false})
	if bg["status"] != "running" {
		t.Fatalf("background = %v", bg)
	}
	streaming(t, dbl, n)
	tree := descendants(cmd.Process.Pid)
	if len(tree) == 0 {
		t.Fatal("no backend process found under the server")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cs.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var left []int
		for pid, start := range tree {
			if alive(pid, start) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend processes survived the server: %v", left)
		}
	}

	again := connect(t, environ)
	st, _ := call(t, again, "session", map[string]any{"action": "status", "workspace_path": ws, "session_handle": h})
	last := st["session"].(map[string]any)["lastTurn"].(map[string]any)
	if last["status"] != "failed" || last["reason"] != "server_exit" || last["turn"] != 2.0 {
		t.Fatalf("status after restart = %v", st)
	}
	page, _ := call(t, again, "session", map[string]any{"action": "history", "workspace_path": ws, "session_handle": h})
	evs := page["events"].([]any)
	if len(evs) < 3 || evs[1].(map[string]any)["text"] != "earlier answer" {
		t.Fatalf("history after restart = %v", page)
	}
}

// notifications/cancelled (the client abandoning its call) has the same
// effect as the cancel tool: the turn stops and is recorded cancelled.
func TestClientCancellationCancelsTheTurn(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: slowReply(30)})
	cs := connect(t, env(t, dbl.URL()))
	ws := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "consult", Arguments: map[string]any{
			"proposal": "abandon me", "backend": "claude", "workspace_path": ws}})
		done <- err
	}()
	streaming(t, dbl, 0)
	cancel()
	<-done
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		l, _ := call(t, cs, "session", map[string]any{"action": "list", "workspace_path": ws})
		ss := l["sessions"].([]any)
		if len(ss) != 1 {
			continue
		}
		last, _ := ss[0].(map[string]any)["lastTurn"].(map[string]any)
		if last["status"] == "cancelled" {
			return
		}
	}
	t.Fatal("the abandoned turn was not recorded as cancelled")
}
