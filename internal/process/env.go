package process

import (
	"sort"
	"strings"

	"github.com/coagent8/coagent8/internal/config"
)

// baseAllow are variables every CLI may see: locale, terminal-free
// basics, temp dirs, TLS trust and proxies needed to reach a provider.
var baseAllow = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP",
	"SHELL", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "SYSTEMROOT", "COMSPEC", "PATHEXT",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
}

// ProviderKeys are provider API-key variables stripped from every child
// unless the user opted into API-key billing for that backend
// (backends.md §0).
var ProviderKeys = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY"}

// Environ builds a child environment from an allowlist: the base list,
// the backend's extra names (exact, or prefixes ending in "*"), then set
// (which wins). The nested-turn marker is always set.
func Environ(env config.Env, extra []string, set map[string]string) []string {
	out := map[string]string{}
	for _, k := range baseAllow {
		if v, ok := env.Lookup(k); ok {
			out[k] = v
		}
	}
	for _, k := range matchAll(env, extra) {
		out[k] = env.Get(k)
	}
	for k, v := range set {
		out[k] = v
	}
	out[config.NestedTurnVar] = "1"
	return flatten(out)
}

func matchAll(env config.Env, names []string) []string {
	var keys []string
	for _, n := range names {
		if p, ok := strings.CutSuffix(n, "*"); ok {
			keys = append(keys, env.KeysWithPrefix(p)...)
			continue
		}
		if _, ok := env.Lookup(n); ok {
			keys = append(keys, n)
		}
	}
	return keys
}

func flatten(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
