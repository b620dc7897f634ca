package mcpserver

import (
	"context"
	"log/slog"
)

// clientMistake is how coagent8 logs one of the SDK's log lines for a
// lifecycle rule the client broke.
type clientMistake struct {
	level slog.Level
	msg   string
}

// clientMistakes maps the SDK's messages (go-sdk v1.8.0 mcp/server.go,
// each logged at error level) to coagent8's. They are the client's
// mistakes, not the server's: the session goes on. A request is
// answered with a JSON-RPC error, which tells the client, so its line is
// debug output; a notification cannot be answered, so its line is a
// warning, the one place the mistake shows.
var clientMistakes = map[string]clientMistake{
	"duplicate initialize request": {slog.LevelDebug,
		"mcp client sent initialize again; answered -32600 invalid request, the session goes on"},
	"method invalid during initialization": {slog.LevelDebug,
		"mcp client sent a request before initialize; answered -32600 invalid request"},
	"initialized before initialize": {slog.LevelWarn,
		"mcp client sent notifications/initialized before initialize; ignored"},
	"duplicate initialized notification": {slog.LevelWarn,
		"mcp client sent notifications/initialized again; ignored"},
}

// sdkLog is the handler of the SDK's logger: it logs [clientMistakes] at
// their level and with their message, and passes every other record to
// h as is. h decides, at the new level, whether a mistake is logged.
type sdkLog struct{ h slog.Handler }

// Enabled reports whether h logs at l; a mistake's record, at error
// level when the SDK asks, is filtered again at its own level in Handle.
func (s sdkLog) Enabled(ctx context.Context, l slog.Level) bool { return s.h.Enabled(ctx, l) }

func (s sdkLog) Handle(ctx context.Context, r slog.Record) error {
	m, ok := clientMistakes[r.Message]
	if !ok {
		return s.h.Handle(ctx, r)
	}
	if !s.h.Enabled(ctx, m.level) {
		return nil
	}
	out := slog.NewRecord(r.Time, m.level, m.msg, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(a)
		return true
	})
	return s.h.Handle(ctx, out)
}

func (s sdkLog) WithAttrs(a []slog.Attr) slog.Handler { return sdkLog{s.h.WithAttrs(a)} }
func (s sdkLog) WithGroup(n string) slog.Handler      { return sdkLog{s.h.WithGroup(n)} }
