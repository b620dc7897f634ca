package cli

import (
	"strings"
	"testing"
)

// TestBudgetFlagsOutOfRange: every USD / request / minute budget flag on
// the terminal refuses an absurd value (1e308, NaN, Inf, above the
// documented bound) as INVALID_INPUT budget.out_of_range naming the flag,
// before a workspace or gate is opened (issue 19 item 2).
func TestBudgetFlagsOutOfRange(t *testing.T) {
	grant := []string{"gate", "grant", "--provider", "anthropic", "--model", "m", "--job", "j", "--price-input", "3",
		"--price-output", "15", "--max-tokens", "1000"}
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"delegate usd 1e308", []string{"delegate", "t", "--max-usd", "1e308"}, "--max-usd must be a number of US dollars above 0 and at most 10000"},
		{"delegate usd NaN", []string{"delegate", "t", "--max-usd", "NaN"}, "--max-usd must be"},
		{"delegate usd Inf", []string{"delegate", "t", "--max-usd", "Inf"}, "--max-usd must be"},
		{"delegate usd 10000.01", []string{"delegate", "t", "--max-usd", "10000.01"}, "--max-usd must be"},
		{"delegate requests", []string{"delegate", "t", "--max-usd", "1", "--max-requests", "10001"}, "--max-requests must be a whole number from 0 to 10000"},
		{"delegate minutes", []string{"delegate", "t", "--max-usd", "1", "--max-minutes", "1441"}, "--max-minutes must be a whole number from 0 to 1440"},
		{"delegate minutes negative", []string{"delegate", "t", "--max-usd", "1", "--max-minutes", "-1"}, "--max-minutes must be"},
		{"grant usd 1e308", append(grant, "--max-requests", "1", "--max-usd", "1e308"), "--max-usd must be a number of US dollars"},
		{"grant usd +Inf", append(grant, "--max-requests", "1", "--max-usd", "+Inf"), "--max-usd must be"},
		{"grant requests", append(grant, "--max-requests", "1000000", "--max-usd", "1"), "--max-requests must be a whole number from 1 to 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := declaredEnv(t, "env:REAL_KEY")
			code, out, errs := runCLI(t, env, "", tt.args...)
			if code != ExitUsage || out != "" || !strings.Contains(errs, "INVALID_INPUT") || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, INVALID_INPUT and %q", code, out, errs, ExitUsage, tt.want)
			}
		})
	}
}
