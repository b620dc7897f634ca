package config

import "strings"

// BillingVar opts backends into API-key billing:
// COAGENT8_API_KEY_BILLING=claude,codex (or all). Without it a provider
// key in the environment never reaches the backend CLI, which then runs
// on its own login.
const BillingVar = "COAGENT8_API_KEY_BILLING"

// providerKeys are the API-key variables each backend's CLI would bill,
// and which coagent8 passes to it only under [BillingVar].
var providerKeys = map[string][]string{
	"claude": {"ANTHROPIC_API_KEY"},
	"codex":  {"OPENAI_API_KEY", "CODEX_API_KEY"},
	"agy":    {"GEMINI_API_KEY"},
}

// APIKeyBilling reports whether the user opted backend into API-key
// billing through [BillingVar] (a comma- or space-separated list of
// backend ids, or "all").
func (e Env) APIKeyBilling(backend string) bool {
	for _, b := range strings.FieldsFunc(strings.ToLower(e.vars[BillingVar]), func(r rune) bool { return r == ',' || r == ' ' }) {
		if b == backend || b == "all" {
			return true
		}
	}
	return false
}

// StrippedKeys returns the names of backend's provider key variables that
// are set (non-empty) but withheld from its CLI because API-key billing is
// off for it; nil when billing is on or none is set. Only names are
// returned, never values.
func (e Env) StrippedKeys(backend string) []string {
	if e.APIKeyBilling(backend) {
		return nil
	}
	var out []string
	for _, k := range providerKeys[backend] {
		if e.vars[k] != "" {
			out = append(out, k)
		}
	}
	return out
}

// StrippedKeysHint is the sentence that explains [Env.StrippedKeys] to
// the user, or "" when none is withheld: the AUTH_REQUIRED refusal and
// doctor both say it (issue 19 item 10).
func (e Env) StrippedKeysHint(backend string) string {
	keys := e.StrippedKeys(backend)
	if len(keys) == 0 {
		return ""
	}
	verb := "is"
	if len(keys) > 1 {
		verb = "are"
	}
	return strings.Join(keys, " and ") + " " + verb + " set but not passed to the " + backend +
		" CLI because API-key billing is off: set " + BillingVar + "=" + backend +
		" to bill that key, or log the CLI in to its own account"
}
