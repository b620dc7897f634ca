package gate

import (
	"bytes"
	"encoding/json"
)

// Usage is a provider's token report, normalised: Input excludes cached
// input on both providers (Anthropic reports it so; OpenAI's cached tokens
// are a subset of input_tokens and are subtracted).
type Usage struct {
	Input      int64
	CacheWrite int64
	CacheRead  int64
	Output     int64
}

// Tokens returns all input and output tokens.
// The sum saturates (see [maxAmount]).
func (u Usage) Tokens() int64 { return sum(u.Input, u.CacheWrite, u.CacheRead, u.Output) }

// Cost prices u at p — at its long-context tier when u's total input is
// above the tier's threshold — rounding each class up.
func (u Usage) Cost(p Price) NanoUSD {
	p = p.at(sum(u.Input, u.CacheWrite, u.CacheRead))
	return NanoUSD(sum(int64(cost(u.Input, p.InputPerMTok)), int64(cost(u.CacheWrite, p.CacheWritePerMTok)),
		int64(cost(u.CacheRead, p.CacheReadPerMTok)), int64(cost(u.Output, p.OutputPerMTok))))
}

// maxed returns the field-wise maximum: message_delta usage is cumulative
// and some servers send 0 input at message_start and the real value later
// (notes/gate.md §3), so neither adding nor blindly assigning is right.
func (u Usage) maxed(v Usage) Usage {
	return Usage{max(u.Input, v.Input), max(u.CacheWrite, v.CacheWrite), max(u.CacheRead, v.CacheRead), max(u.Output, v.Output)}
}

// wireUsage holds both providers' usage field names.
type wireUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	InputTokensDetails       struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

// negative reports whether any count is below zero: no provider bills a
// negative count, so such a report (a lying upstream, or an intermediary
// rewriting it) cannot be trusted in any field.
func (w wireUsage) negative() bool {
	return min(w.InputTokens, w.OutputTokens, w.CacheCreationInputTokens, w.CacheReadInputTokens, w.InputTokensDetails.CachedTokens) < 0
}

func (w wireUsage) normal(p Provider) Usage {
	if p == OpenAI {
		cached := min(w.InputTokensDetails.CachedTokens, w.InputTokens)
		return Usage{Input: w.InputTokens - cached, CacheRead: cached, Output: w.OutputTokens}
	}
	return Usage{Input: w.InputTokens, CacheWrite: w.CacheCreationInputTokens,
		CacheRead: w.CacheReadInputTokens, Output: w.OutputTokens}
}

// event is the part of a streamed event (or a whole non-streamed body) that
// carries usage.
type sseEvent struct {
	Type     string                      `json:"type"`
	Usage    *wireUsage                  `json:"usage"`
	Message  *struct{ Usage *wireUsage } `json:"message"`
	Response *struct{ Usage *wireUsage } `json:"response"`
}

// meter accumulates usage from a response body fed to it in arbitrary
// chunks. It is not safe for concurrent use.
type meter struct {
	provider Provider
	stream   bool // text/event-stream; else one JSON body
	line     []byte
	overflow bool
	usage    Usage
	seen     bool // some usage was seen
	final    bool // the terminal usage report was seen
	// invalid is set by a usage object with a negative count: the
	// exchange is then charged as if no usage arrived (its reservation).
	// Clamping the field to zero charged the rest and credited the
	// reservation back (red team 3).
	invalid bool
}

// reported reports whether the terminal usage arrived and every usage
// object of the exchange was sound: only then is it charged as reported.
func (m *meter) reported() bool { return m.final && !m.invalid }

// maxLine bounds one buffered SSE line (or a whole JSON body).
const maxLine = 4 << 20

func (m *meter) write(p []byte) {
	if !m.stream {
		m.buffer(p)
		return
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			m.buffer(p)
			return
		}
		m.buffer(p[:i])
		m.endLine()
		p = p[i+1:]
	}
}

func (m *meter) buffer(p []byte) {
	if len(m.line)+len(p) > maxLine {
		m.overflow = true
		return
	}
	m.line = append(m.line, p...)
}

// endLine inspects one SSE line. Only data lines that mention usage are
// decoded, which keeps the per-delta cost to one substring search.
func (m *meter) endLine() {
	line, over := m.line, m.overflow
	m.line, m.overflow = m.line[:0], false
	data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:"))
	if over || !ok || !bytes.Contains(data, []byte(`"usage"`)) {
		return
	}
	m.observe(bytes.TrimSpace(data))
}

// close handles a non-streamed body at its end.
func (m *meter) close() {
	if !m.stream && !m.overflow {
		m.observe(m.line)
	}
}

func (m *meter) observe(data []byte) {
	var ev sseEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	w, final := m.usageOf(ev)
	if w == nil {
		return
	}
	if w.negative() {
		m.invalid = true
		return
	}
	m.usage, m.seen = m.usage.maxed(w.normal(m.provider)), true
	m.final = m.final || final
}

// usageOf picks the usage object and whether it is the terminal report.
func (m *meter) usageOf(ev sseEvent) (*wireUsage, bool) {
	switch {
	case !m.stream:
		if ev.Response != nil && ev.Response.Usage != nil {
			return ev.Response.Usage, true
		}
		return ev.Usage, true
	case ev.Type == "message_start" && ev.Message != nil:
		return ev.Message.Usage, false
	case ev.Type == "message_delta":
		return ev.Usage, true
	case (ev.Type == "response.completed" || ev.Type == "response.incomplete" || ev.Type == "response.failed") && ev.Response != nil:
		return ev.Response.Usage, true
	}
	return nil, false
}
