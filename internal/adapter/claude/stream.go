package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/jsonl"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
)

// event is the subset of a stream-json record coagent8 reads.
type event struct {
	Type       string          `json:"type"`
	Subtype    string          `json:"subtype"`
	SessionID  string          `json:"session_id"`
	Tools      []string        `json:"tools"`
	MCPServers json.RawMessage `json:"mcp_servers"`
	Mode       *string         `json:"permissionMode"`
	Model      string          `json:"model"`
	Plugins    []plugin        `json:"plugins"`
	Version    string          `json:"claude_code_version"`
	Error      string          `json:"error"`
	Message    *message        `json:"message"`
	// Event is an object on stream_event records but a string on
	// system/ui_invalidate ones: decoded per type.
	Event     json.RawMessage `json:"event"`
	RateLimit *rateLimitInfo  `json:"rate_limit_info"`

	// result fields
	IsError        bool           `json:"is_error"`
	Result         *string        `json:"result"`
	APIErrorStatus *int           `json:"api_error_status"`
	Errors         []string       `json:"errors"`
	Usage          *resultUsage   `json:"usage"`
	CostUSD        float64        `json:"total_cost_usd"`
	ModelUsage     map[string]any `json:"modelUsage"`
}

type plugin struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

type message struct {
	// Model is the model the provider says answered.
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
		Name string `json:"name"`
	} `json:"content"`
}

type streamEvent struct {
	Type string `json:"type"`
	// Message is message_start's message: the model the provider reports.
	Message *struct {
		Model string `json:"model"`
	} `json:"message"`
	Delta *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
}

type rateLimitInfo struct {
	Status   string `json:"status"`
	ResetsAt any    `json:"resetsAt"`
}

type resultUsage struct {
	Input         int64 `json:"input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	Output        int64 `json:"output_tokens"`
}

// turnState accumulates one turn's stream.
type turnState struct {
	inv      invocation
	obs      adapter.Observer
	check    func(string) error
	verified bool
	res      adapter.Result
	deltas   strings.Builder
	// deltasCut: the streamed text outgrew MaxAnswerBytes (or a delta
	// record was clipped), so deltas is only its leading part.
	deltasCut bool
	// cut is how the record being handled was reduced.
	cut      jsonl.Cut
	category string // assistant error category
	rate     *rateLimitInfo
	unknown  map[string]bool
}

// consume reads the stream to its terminal result. Any error means the
// caller must kill the tree and return no answer.
func consume(p adapter.Proc, inv invocation, t adapter.Turn) (adapter.Result, error) {
	st := &turnState{inv: inv, obs: t.Observer, check: t.CheckModel, unknown: map[string]bool{}}
	lines := jsonl.NewReader(p.Stdout(), adapter.RecordLimits())
	for {
		rec, err := lines.Next()
		if errors.Is(err, io.EOF) {
			return adapter.Result{}, st.eof(p)
		}
		if err != nil {
			return adapter.Result{}, st.readError(err)
		}
		p.Touch()
		done, err := st.handle(rec)
		if err != nil || done {
			return st.res, err
		}
	}
}

// eof: the stream ended without a terminal result event.
func (st *turnState) eof(p adapter.Proc) error {
	code, why := p.Wait()
	if how := p.Ended(); why == process.EndNone && strings.HasPrefix(how, "was killed") {
		// A signal nobody in the turn sent: name it, not the report
		// (issue 14). Before the report the profile was never verified, so
		// it stays a refusal (and its security event); after it, the
		// answer is lost.
		if !st.verified {
			return fault.New(fault.SandboxUnavailable, "claude.killed", fmt.Sprintf(
				"Claude Code %s before its startup report, so its read-only profile could not be verified; the turn was refused.", how))
		}
		return fault.New(fault.ProcessError, "claude.killed", fmt.Sprintf(
			"Claude Code %s after its startup report, before its final result; the partial answer was discarded.", how))
	}
	if !st.verified {
		// An old CLI rejects the profile's flags before reporting: say so
		// precisely instead of a generic refusal.
		if _, err := st.inv.backend.probeBinary(context.Background()); err != nil {
			return err
		}
		return refusal("the CLI exited before its startup report")
	}
	return fault.New(fault.ProcessError, "claude.no_result",
		fmt.Sprintf("Claude Code exited (status %d) without a final result; the partial answer was discarded.", code))
}

// readError types a failed read: a malformed record too long to keep is
// still a malformed record (a refusal before the startup report).
func (st *turnState) readError(err error) error {
	var se *jsonl.SyntaxError
	switch {
	case !errors.As(err, &se):
		return err
	case !st.verified:
		return refusal("output before the startup report")
	}
	return fault.Wrap(fault.ProtocolError, "claude.malformed_event",
		"Claude Code wrote a malformed stream record; the partial answer was discarded.", err)
}

func (st *turnState) handle(rec jsonl.Record) (bool, error) {
	if !st.verified && rec.Size > adapter.MaxRecordBytes {
		// The startup report is verified field by field, from the record
		// as written: never from a reduction, which could hide what it
		// must not contain.
		return false, refusal(fmt.Sprintf("a %d-byte record exceeds the %d-byte limit of a verified record",
			rec.Size, adapter.MaxRecordBytes))
	}
	if !st.verified && contentFreeNotice(rec.Data) {
		return false, nil
	}
	var ev event
	if err := json.Unmarshal(rec.Data, &ev); err != nil || ev.Type == "" {
		if !st.verified {
			return false, refusal("output before the startup report")
		}
		return false, fault.Wrap(fault.ProtocolError, "claude.malformed_event",
			"Claude Code wrote a malformed stream record; the partial answer was discarded.", err)
	}
	if !st.verified {
		return false, st.verifyInit(ev)
	}
	if rec.Cut&jsonl.CutValues != 0 && ev.Type != "user" {
		// Members were dropped: an is_error, an error category or a model
		// could be among them. Tool results ("user") are never read.
		return false, fault.New(fault.BufferLimit, "claude.record_limit", fmt.Sprintf(
			"Claude Code wrote a %d-byte %s record too large to check (over %d bytes once its strings are clipped); the answer was discarded.",
			rec.Size, truncate(ev.Type, 40), adapter.MaxReducedBytes))
	}
	st.cut = rec.Cut
	return st.dispatch(ev)
}

func (st *turnState) dispatch(ev event) (bool, error) {
	switch ev.Type {
	case "system":
		return false, st.system(ev)
	case "stream_event":
		return false, st.streamDelta(ev)
	case "assistant":
		return false, st.assistant(ev)
	case "user":
	case "rate_limit_event":
		if ev.RateLimit != nil && ev.RateLimit.Status == "rejected" {
			st.rate = ev.RateLimit
		}
	case "result":
		return true, st.result(ev)
	default:
		st.warnUnknown(ev.Type)
	}
	return false, nil
}

func (st *turnState) system(ev event) error {
	switch {
	case ev.Subtype == "init":
		return refusal("a second startup report")
	case strings.HasPrefix(ev.Subtype, "hook"):
		return fault.New(fault.SandboxUnavailable, "claude.hook_activity",
			"Claude Code ran a hook although hooks are disabled for read-only turns; the turn was refused.")
	}
	return nil
}

func (st *turnState) streamDelta(ev event) error {
	var se streamEvent
	if err := json.Unmarshal(ev.Event, &se); err != nil {
		return fault.Wrap(fault.ProtocolError, "claude.malformed_event",
			"Claude Code wrote a malformed stream record; the partial answer was discarded.", err)
	}
	if se.Type == "message_start" {
		// The provider's own event: it always names its model, and only
		// the CLI makes up <synthetic> messages (never streamed), so a
		// provider saying either would pass the check unexamined.
		if se.Message == nil {
			return st.mismatch("")
		}
		if m := se.Message.Model; m == "" || m == syntheticModel {
			return st.mismatch(m)
		}
		return st.checkModel(se.Message.Model)
	}
	if se.Delta == nil || se.Delta.Type != "text_delta" {
		return nil
	}
	st.keepDelta(se.Delta.Text)
	if st.obs != nil {
		st.obs.Delta(se.Delta.Text)
	}
	return nil
}

// keepDelta appends streamed text up to MaxAnswerBytes: the rest could
// only be cut off later, and a runaway stream must not grow memory.
func (st *turnState) keepDelta(text string) {
	if st.cut.Clipped(text, adapter.RecordLimits()) {
		st.deltasCut = true
	}
	if room := adapter.MaxAnswerBytes - st.deltas.Len(); len(text) > room {
		text, st.deltasCut = text[:room], true
	}
	st.deltas.WriteString(text)
}

func (st *turnState) assistant(ev event) error {
	if ev.Error != "" && st.category == "" {
		st.category = ev.Error
	}
	if ev.Message == nil {
		return nil
	}
	if err := st.checkModel(ev.Message.Model); err != nil {
		return err
	}
	for _, c := range ev.Message.Content {
		if c.Type == "tool_use" {
			st.res.ToolCount++
			if st.obs != nil {
				st.obs.Activity("tool", c.Name)
			}
		}
	}
	return nil
}

// syntheticModel is the model Claude Code writes on the assistant messages
// it makes up itself (API errors, "No response requested."): no provider
// answered them.
const syntheticModel = "<synthetic>"

// checkModel refuses a record whose provider-reported model is not the one
// the startup report named and consent approved (R-039, issue 19 item 7):
// a provider may answer with another model than the one requested. The
// result's modelUsage is not checked: it names the models Claude Code
// asked for (its own helper calls included), not what answered.
func (st *turnState) checkModel(model string) error {
	if model == "" || model == syntheticModel || strings.EqualFold(model, st.res.Model) {
		return nil
	}
	return st.mismatch(model)
}

// mismatch is the refusal of a record reporting model ("" or an invalid
// id is shown as "(invalid id)").
func (st *turnState) mismatch(model string) error {
	shown := "(invalid id)"
	if adapter.ValidModel(model) == nil {
		shown = model
	}
	return fault.New(fault.PolicyDenied, "consent.model_mismatch", fmt.Sprintf(
		"Claude Code's provider answered with model %q, not %q from the startup report; the turn was refused and its answer discarded.",
		shown, st.res.Model)).With("started", st.res.Model).With("reported", shown)
}

func (st *turnState) warnUnknown(typ string) {
	if st.unknown[typ] {
		return
	}
	st.unknown[typ] = true
	msg := fmt.Sprintf("Claude Code sent an unknown event type %q; it was ignored.", truncate(typ, 40))
	st.res.Warnings = append(st.res.Warnings, msg)
	if st.obs != nil {
		st.obs.Warning(msg)
	}
}

func (st *turnState) result(ev event) error {
	if ev.IsError || ev.Subtype != "success" {
		return failure(ev, st.category, st.rate)
	}
	if st.category != "" {
		return failure(ev, st.category, st.rate)
	}
	text, cut := st.deltas.String(), st.deltasCut
	if ev.Result != nil {
		text, cut = *ev.Result, st.cut.Clipped(*ev.Result, adapter.RecordLimits())
	}
	if strings.TrimSpace(text) == "" {
		return fault.New(fault.ProcessError, "claude.empty_answer", "Claude Code returned an empty answer.")
	}
	st.res.Text, st.res.Truncated = text, cut
	st.res.SessionID = st.inv.sessionID
	if ev.Usage != nil {
		st.res.Usage = adapter.Usage{
			InputTokens:  ev.Usage.Input + ev.Usage.CacheCreation + ev.Usage.CacheRead,
			OutputTokens: ev.Usage.Output,
		}
	}
	st.res.Usage.CostUSD = ev.CostUSD
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// sortedCopy returns a sorted copy (the report's order is not a contract).
func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}
