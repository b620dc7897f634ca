package codex

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// scenario scripts the fake app-server (fakeAppServer). Zero values give
// a well-behaved 0.169.0 that reports the read-only profile.
type scenario struct {
	UserAgent      string            `json:"userAgent,omitempty"`
	Sandbox        json.RawMessage   `json:"sandbox,omitempty"`
	ApprovalPolicy json.RawMessage   `json:"approvalPolicy,omitempty"`
	Model          string            `json:"model,omitempty"`
	ConfigServers  []string          `json:"configServers,omitempty"`
	MCPPages       [][]statusEntry   `json:"mcpPages,omitempty"`
	ResumeError    bool              `json:"resumeError,omitempty"`
	TurnEvents     []json.RawMessage `json:"turnEvents,omitempty"`
	ServerRequests []json.RawMessage `json:"serverRequests,omitempty"`
	ExitMidTurn    bool              `json:"exitMidTurn,omitempty"`
	HangTurn       bool              `json:"hangTurn,omitempty"`

	// Wrap runs the real CLI at this path instead, dropping the -c
	// override and thread config entry of server Unhide (so the real CLI
	// starts it).
	Wrap   string `json:"wrap,omitempty"`
	Unhide string `json:"unhide,omitempty"`
}

type statusEntry struct {
	Name          string  `json:"name"`
	RuntimeStatus *string `json:"runtimeStatus"`
}

func writeScenario(home string, s scenario) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(home, "fake.json"), b, 0o600)
}

// fakeLog returns the methods the fake received, in order.
func fakeLog(home string) []string {
	b, _ := os.ReadFile(filepath.Join(home, "fake.log"))
	return strings.Fields(string(b))
}

func fakeAppServer(args []string) int {
	home := os.Getenv("CODEX_HOME")
	var sc scenario
	b, err := os.ReadFile(filepath.Join(home, "fake.json"))
	if err == nil {
		err = json.Unmarshal(b, &sc)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake: scenario:", err)
		return 2
	}
	if sc.Wrap != "" {
		return wrap(sc, args)
	}
	f := &fake{sc: sc, out: json.NewEncoder(os.Stdout), log: filepath.Join(home, "fake.log")}
	return f.serve(os.Stdin)
}

type fake struct {
	sc     scenario
	out    *json.Encoder
	log    string
	mu     sync.Mutex
	thread string
	page   int
}

type fakeReq struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (f *fake) serve(in io.Reader) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 8<<20), 8<<20)
	for sc.Scan() {
		var r fakeReq
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			return 3
		}
		if r.Method == "" {
			f.record("resp:" + compact(sc.Bytes()))
			continue // a response to one of our server requests
		}
		f.record(r.Method)
		if code, stop := f.handle(r); stop {
			return code
		}
	}
	return 0
}

func (f *fake) record(method string) {
	fh, err := os.OpenFile(f.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		fmt.Fprintln(fh, method)
		fh.Close()
	}
}

func (f *fake) send(v any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.Encode(v)
}

func (f *fake) reply(r fakeReq, result any) {
	f.send(map[string]any{"id": r.ID, "result": result})
}

func orRaw(v json.RawMessage, def string) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage(def)
	}
	return v
}

// handle answers one request; stop reports whether to exit with code.
func (f *fake) handle(r fakeReq) (int, bool) {
	var p struct {
		Cwd      string `json:"cwd"`
		ThreadID string `json:"threadId"`
	}
	json.Unmarshal(r.Params, &p)
	switch r.Method {
	case "initialize":
		ua := f.sc.UserAgent
		if ua == "" {
			ua = "coagent8/0.169.0 (Fake; x86_64) test"
		}
		f.reply(r, map[string]any{"userAgent": ua, "codexHome": "/fake"})
	case "config/read":
		servers := map[string]any{}
		for _, s := range f.sc.ConfigServers {
			servers[s] = map[string]any{"command": "x", "enabled": true}
		}
		f.reply(r, map[string]any{"config": map[string]any{"model": f.model(), "mcp_servers": servers}, "origins": map[string]any{}})
	case "thread/start", "thread/resume":
		if r.Method == "thread/resume" && f.sc.ResumeError {
			f.send(map[string]any{"id": r.ID, "error": map[string]any{"code": -32600, "message": "no rollout found for thread id"}})
			return 0, false
		}
		f.thread = p.ThreadID
		if f.thread == "" {
			f.thread = "01a22ac1-0000-7000-8000-000000000001"
		}
		f.reply(r, map[string]any{"thread": map[string]any{"id": f.thread, "ephemeral": false},
			"model": f.model(), "modelProvider": "fake", "cwd": p.Cwd,
			"approvalPolicy": orRaw(f.sc.ApprovalPolicy, `"never"`),
			"sandbox":        orRaw(f.sc.Sandbox, `{"type":"readOnly","networkAccess":false}`)})
	case "mcpServerStatus/list":
		f.replyStatus(r)
	case "turn/start":
		f.reply(r, map[string]any{"turn": map[string]any{"id": "turn-1", "items": []any{}, "status": "inProgress"}})
		return f.playTurn()
	case "turn/interrupt":
		f.reply(r, map[string]any{})
		f.send(map[string]any{"method": "turn/completed", "params": map[string]any{"threadId": f.thread,
			"turn": map[string]any{"id": "turn-1", "items": []any{}, "status": "interrupted"}}})
	default:
		f.reply(r, map[string]any{})
	}
	return 0, false
}

func (f *fake) model() string {
	if f.sc.Model == "" {
		return testModel
	}
	return f.sc.Model
}

func (f *fake) replyStatus(r fakeReq) {
	var data []statusEntry
	if f.page < len(f.sc.MCPPages) {
		data = f.sc.MCPPages[f.page]
	}
	f.page++
	var next any
	if f.page < len(f.sc.MCPPages) {
		next = fmt.Sprintf("page-%d", f.page)
	}
	if data == nil {
		data = []statusEntry{}
	}
	f.reply(r, map[string]any{"data": data, "nextCursor": next})
}

// playTurn sends the scripted server requests and notifications, then
// completes the turn unless told to exit or hang.
func (f *fake) playTurn() (int, bool) {
	for i, req := range f.sc.ServerRequests {
		var m map[string]any
		json.Unmarshal(req, &m)
		m["id"] = 1000 + i
		f.send(m)
	}
	for _, ev := range f.sc.TurnEvents {
		f.send(ev)
	}
	switch {
	case f.sc.ExitMidTurn:
		return 0, true
	case f.sc.HangTurn:
		return 0, false
	}
	f.send(map[string]any{"method": "turn/completed", "params": map[string]any{"threadId": f.thread,
		"turn": map[string]any{"id": "turn-1", "items": []any{}, "status": "completed"}}})
	return 0, false
}

// wrap runs the real CLI, hiding one server from the disable overrides.
func wrap(sc scenario, args []string) int {
	kept := []string{"app-server"}
	for i := 0; i < len(args); i++ {
		if args[i] == "-c" && i+1 < len(args) && args[i+1] == "mcp_servers."+sc.Unhide+".enabled=false" {
			i++
			continue
		}
		kept = append(kept, args[i])
	}
	cmd := exec.Command(sc.Wrap, kept...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil || cmd.Start() != nil {
		return 4
	}
	go func() {
		sc2 := bufio.NewScanner(os.Stdin)
		sc2.Buffer(make([]byte, 8<<20), 8<<20)
		for sc2.Scan() {
			stdin.Write(append(unhide(sc2.Bytes(), sc.Unhide), '\n'))
		}
		stdin.Close()
	}()
	if err := cmd.Wait(); err != nil {
		return 1
	}
	return 0
}

// unhide removes server name from a thread request's config.mcp_servers.
func unhide(line []byte, name string) []byte {
	var m map[string]any
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	params, _ := m["params"].(map[string]any)
	cfg, _ := params["config"].(map[string]any)
	servers, _ := cfg["mcp_servers"].(map[string]any)
	if servers == nil {
		return line
	}
	delete(servers, name)
	out, _ := json.Marshal(m)
	return out
}

// compact renders a response's result without spaces for the log.
func compact(line []byte) string {
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	json.Unmarshal(line, &m)
	if len(m.Error) > 0 {
		return "error"
	}
	return strings.ReplaceAll(string(m.Result), " ", "")
}
