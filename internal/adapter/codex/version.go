package codex

import (
	"strconv"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// MinVersion is the oldest Codex CLI accepted. The app-server protocol is
// experimental and its fields move between releases; 0.169.0 is the
// release whose generated schema was verified field by field (thread
// result sandbox/approvalPolicy, mcpServerStatus/list runtimeStatus with
// the "disabled" state, model/rerouted, codexErrorInfo). Older releases
// are refused rather than trusted (notes/backends.md §1).
const MinVersion = "0.169.0"

// versionFromUserAgent extracts the CLI version from initialize's
// userAgent, "<originator>/<X.Y.Z> (<os>; <arch>) …" (verified with
// 0.169.0), so no extra `--version` process runs on the request path.
func versionFromUserAgent(ua string) string {
	_, rest, ok := strings.Cut(ua, "/")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, " ")
	return v
}

// checkVersion returns CLI_UNSUPPORTED unless v is X.Y.Z ≥ MinVersion.
func checkVersion(v string) error {
	if !atLeast(v, MinVersion) {
		return fault.New(fault.CLIUnsupported, "codex.version",
			"Codex CLI version "+clip(v, 32)+" is not supported; install "+MinVersion+" or newer.").
			With("minimum", MinVersion).With("found", clip(v, 32))
	}
	return nil
}

// atLeast reports whether version v (leading X.Y.Z, suffix ignored) is ≥ min.
func atLeast(v, min string) bool {
	a, ok1 := triple(v)
	b, ok2 := triple(min)
	if !ok1 || !ok2 {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return true
}

func triple(v string) ([3]int, bool) {
	var out [3]int
	v, _, _ = strings.Cut(v, "-")
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}
