package config

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFileDefaults(t *testing.T) {
	f, err := LoadFile(filepath.Join(t.TempDir(), "missing.json"))
	if err != nil || f.GovernanceErr() != nil {
		t.Fatalf("missing file: err %v, governance %v", err, f.GovernanceErr())
	}
	// empty config → limits 20 and 2.
	if f.Governance.AskAbovePrice().Cmp(big.NewRat(20, 1)) != 0 || f.Governance.PriceMultiplier().Cmp(big.NewRat(2, 1)) != 0 {
		t.Errorf("default limits = %v, %v", f.Governance.AskAbovePrice(), f.Governance.PriceMultiplier())
	}
	if f.SchemaVersion != 1 || f.RoutingStrategy != "fixed" || f.ToolProfile != "canonical" || f.DefaultBackend != "" {
		t.Errorf("defaults = %+v", f)
	}
}

func TestLoadFileOriginalKeys(t *testing.T) {
	p := writeConfig(t, `{"schemaVersion":1,"defaultBackend":"codex","routing":{"strategy":"smart_quota","allowedBackends":["codex","claude"]},
		"toolProfile":"compact","somethingElse":{"x":1},
		"governance":{"models":{"allow":["gpt-5"],"ask":["claude-opus-4.6"],"deny":["o3"]},"askAbovePrice":12.5,"priceMultiplier":1.5}}`)
	f, err := LoadFile(p)
	if err != nil || f.GovernanceErr() != nil {
		t.Fatalf("LoadFile: %v / %v", err, f.GovernanceErr())
	}
	allow, ask, deny := f.Governance.Lists()
	got := []any{f.DefaultBackend, f.RoutingStrategy, f.AllowedBackends, f.ToolProfile, allow, ask, deny,
		f.Governance.AskAbovePrice().RatString(), f.Governance.PriceMultiplier().RatString()}
	want := []any{"codex", "smart_quota", []string{"codex", "claude"}, "compact", []string{"gpt-5"},
		[]string{"claude-opus-4.6"}, []string{"o3"}, "25/2", "3/2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadFile (-want +got):\n%s", diff)
	}
	if f2, _ := LoadFile(writeConfig(t, `{"defaultBackend":null}`)); f2.DefaultBackend != "" {
		t.Errorf("null defaultBackend = %q", f2.DefaultBackend)
	}
}

// TestLoadFileBadGovernance covers R-035: each malformed governance section
// refuses turns with POLICY_DENIED naming the key; nothing is defaulted.
func TestLoadFileBadGovernance(t *testing.T) {
	tests := []struct{ body, key string }{
		{`{"governance":{"askAbovePrice":-1}}`, "governance.askAbovePrice"},
		{`{"governance":{"askAbovePrice":"20"}}`, "governance.askAbovePrice"},
		{`{"governance":{"askAbovePrice":"cheap"}}`, "governance.askAbovePrice"},
		{`{"governance":{"askAbovePrice":null}}`, "governance.askAbovePrice"},
		{`{"governance":{"askAbovePrice":1e999999999}}`, "governance.askAbovePrice"},
		{`{"governance":{"priceMultiplier":0}}`, "governance.priceMultiplier"},
		{`{"governance":{"priceMultiplier":-2}}`, "governance.priceMultiplier"},
		{`{"governance":{"models":{"block":["x"]}}}`, "governance.models.block"},
		{`{"governance":{"models":{"allow":"gpt-5"}}}`, "governance.models.allow"},
		{`{"governance":{"models":{"deny":[1]}}}`, "governance.models.deny"},
		{`{"governance":{"models":{"deny":["ok","--yolo"]}}}`, "governance.models.deny[1]"},
		{`{"governance":{"models":[]}}`, "governance.models"},
		{`{"governance":{"askAbove":20}}`, "governance.askAbove"},
		{`{"governance":[]}`, "governance"},
		{`[1,2]`, "config"},
		{`null`, "config"},
		// Issue 19 item 13: another schema's file is refused, not half used.
		{`{"schemaVersion":2,"governance":{"models":{"allow":["gpt-5"]}}}`, "schemaVersion"},
		{`{"schemaVersion":"1"}`, "schemaVersion"},
	}
	for _, tt := range tests {
		f, err := LoadFile(writeConfig(t, tt.body))
		if err == nil {
			t.Errorf("LoadFile(%s): no error", tt.body)
		}
		var fe *fault.Error
		if !errors.As(f.GovernanceErr(), &fe) || fe.Code != fault.PolicyDenied || fe.Reason != "config.governance_invalid" {
			t.Errorf("LoadFile(%s).GovernanceErr() = %v, want POLICY_DENIED config.governance_invalid", tt.body, f.GovernanceErr())
			continue
		}
		if fe.Details["key"] != tt.key {
			t.Errorf("LoadFile(%s) key = %q, want %q", tt.body, fe.Details["key"], tt.key)
		}
		if f.Governance.AskAbovePrice() != nil {
			t.Errorf("LoadFile(%s) kept default limits despite the error", tt.body)
		}
	}
}

// TestLoadFileBadOtherKeys: an invalid non-governance key is reported and
// defaulted, and turns still run.
func TestLoadFileBadOtherKeys(t *testing.T) {
	f, err := LoadFile(writeConfig(t, `{"toolProfile":"huge","routing":{"allowedBackends":["x"]},"defaultBackend":7}`))
	var ke *KeyError
	if !errors.As(err, &ke) {
		t.Fatalf("err = %v, want a KeyError", err)
	}
	if f.GovernanceErr() != nil || f.ToolProfile != "canonical" || f.AllowedBackends != nil {
		t.Errorf("File = %+v, governance %v", f, f.GovernanceErr())
	}
}

func TestLoadFileUnreadable(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		// Permission bits do not stop root; a directory is unreadable as a file for everyone.
		p := t.TempDir()
		f, err := LoadFile(p)
		if err == nil || f.GovernanceErr() == nil {
			t.Errorf("directory as config: err %v, governance %v", err, f.GovernanceErr())
		}
		return
	}
	p := writeConfig(t, `{}`)
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	f, err := LoadFile(p)
	if err == nil || f.GovernanceErr() == nil {
		t.Errorf("unreadable config: err %v, governance %v", err, f.GovernanceErr())
	}
}

func TestLoadFileTooLarge(t *testing.T) {
	big := make([]byte, MaxFileBytes+10)
	for i := range big {
		big[i] = ' '
	}
	copy(big, "{}")
	f, err := LoadFile(writeConfig(t, string(big)))
	if err == nil || f.GovernanceErr() == nil {
		t.Errorf("oversize config accepted")
	}
}

// TestLoadFileEgress: the egress section is kept verbatim (validated later
// by egress.ParseConfig); absent is nil; an unusable file is an error, so
// the gate cannot start on a policy it could not read.
func TestLoadFileEgress(t *testing.T) {
	tests := []struct {
		name    string
		body    string // "" = no file
		want    string
		wantErr bool
	}{
		{"no file", "", "", false},
		{"no section", `{"toolProfile":"compact"}`, "", false},
		{"section verbatim", `{"egress": {"portal_threshold": 0.25, "bogus": [1]}}`, `{"portal_threshold": 0.25, "bogus": [1]}`, false},
		{"null section kept", `{"egress":null}`, `null`, false},
		{"not an object", `[1,2]`, "", true},
		{"not JSON", `{"egress":`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "missing.json")
			if tt.body != "" {
				p = writeConfig(t, tt.body)
			}
			f, _ := LoadFile(p)
			raw, err := f.Egress()
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, string(raw)); diff != "" {
				t.Errorf("section (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultBackendListAgreesWithRefusal (issue 18 item 6): the check's
// list of defaultBackend values and the refusal agree; smart_quota (a
// routing strategy) is in neither.
func TestDefaultBackendListAgreesWithRefusal(t *testing.T) {
	f, err := LoadFile(writeConfig(t, `{"schemaVersion":1,"defaultBackend":"smart_quota"}`))
	var ke *KeyError
	if !errors.As(err, &ke) || !strings.Contains(err.Error(), "must be one of [codex claude agy gemini]") {
		t.Fatalf("err = %v, want the defaultBackend KeyError listing codex claude agy gemini", err)
	}
	fe := fault.From(f.DefaultBackendErr())
	if got := []string{string(fe.Code), fe.Reason, f.DefaultBackend}; !cmp.Equal(got, []string{"INVALID_INPUT", "config.default_backend_invalid", ""}) {
		t.Errorf("DefaultBackendErr = %v, DefaultBackend %q", fe, f.DefaultBackend)
	}
}

// TestLoadFileNamesWhyNotAnObject: a file that is not one JSON object is
// refused with its real cause: valid JSON of another kind (newcomer report:
// a truncated file said "not a JSON object: unexpected EOF"); a file that
// is not JSON at all is TestLoadFileInvalidJSON's.
func TestLoadFileNamesWhyNotAnObject(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"an array", `[1,2]`, "not a JSON object"},
		{"null", `null`, "not a JSON object: null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := LoadFile(writeConfig(t, tt.body))
			if err == nil {
				t.Fatal("LoadFile accepted the file")
			}
			if got := f.GovernanceErr().Error(); !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// TestLoadFileInvalidJSON: a file that does not parse as JSON refuses turns
// with its own reason, config.invalid_json, and the parser's line and
// column, not config.governance_invalid (which is for well-formed JSON
// with a bad governance section).
func TestLoadFileInvalidJSON(t *testing.T) {
	tests := []struct {
		name, body string
		line, col  int
		problem    string
	}{
		{"plain text", "hello", 1, 1, "invalid character 'h' looking for beginning of value"},
		{"truncated", `{"governance":`, 1, 15, "unexpected EOF: the file ends before its JSON value does (truncated?)"},
		{"truncated on line 3", "{\n \"governance\": {\n  \"models\":", 3, 12, "unexpected EOF"},
		{"syntax error", `{"a":1,,}`, 1, 8, "invalid character ',' looking for beginning of object key string"},
		{"column counts characters", "{\"é\": x}", 1, 7, "invalid character 'x'"},
		{"empty", "", 1, 1, "the file is empty"},
		{"blank", "\n\n", 3, 1, "the file is empty"},
		{"two values", `{"a":1} {"b":2}`, 1, 9, "trailing data after the JSON value"},
		{"stray brace", "{\"a\":1}\n}", 2, 1, "trailing data after the JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := LoadFile(writeConfig(t, tt.body))
			var je *JSONError
			if !errors.As(err, &je) {
				t.Fatalf("LoadFile error = %v, want a *JSONError", err)
			}
			fe := fault.From(f.GovernanceErr())
			got := []any{fe.Code, fe.Reason, fe.Details["line"], fe.Details["column"], je.Line, je.Column}
			want := []any{fault.PolicyDenied, ReasonInvalidJSON, fmt.Sprint(tt.line), fmt.Sprint(tt.col), tt.line, tt.col}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("refusal (-want +got):\n%s\nmessage: %s", d, fe.Message)
			}
			wantMsg := fmt.Sprintf("config.json is not valid JSON: line %d, column %d: %s", tt.line, tt.col, tt.problem)
			if !strings.Contains(fe.Message, wantMsg) {
				t.Errorf("message = %q, want it to contain %q", fe.Message, wantMsg)
			}
			if f.Governance.AskAbovePrice() != nil {
				t.Error("kept default limits despite the error")
			}
		})
	}
}

// TestLoadFileMisspeltTopKey: a top-level key that looks like a known
// one misspelt is reported naming it; a misspelt governance section
// refuses turns (its rules would silently not apply). Keys unlike any
// known one are kept and ignored, as another tool's settings.
func TestLoadFileMisspeltTopKey(t *testing.T) {
	tests := []struct {
		name, cfg  string
		wantErr    string // substring of LoadFile's error; "" = none
		governance string // GovernanceErr's reason; "" = usable
	}{
		{"governance misspelt", `{"schemaVersion":1,"governence":{"models":{"allow":["m"]}}}`, `governence: unknown top-level key: did you mean "governance"?`, "config.governance_invalid"},
		{"governance in another case", `{"Governance":{}}`, `Governance: unknown top-level key: did you mean "governance"?`, "config.governance_invalid"},
		{"delegate misspelt", `{"delegat":{"maxUSD":1}}`, `delegat: unknown top-level key: did you mean "delegate"?`, ""},
		{"gate misspelt", `{"gatee":{}}`, `did you mean "gate"?`, ""},
		{"another tool's key", `{"somethingElse":{"x":1}}`, "", ""},
		{"a word near a short key", `{"data":1}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := LoadFile(writeConfig(t, tt.cfg))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			gotGov := ""
			if ge := f.GovernanceErr(); ge != nil {
				gotGov = fault.From(ge).Reason
			}
			if (tt.wantErr == "") != (gotErr == "") || !strings.Contains(gotErr, tt.wantErr) || gotGov != tt.governance {
				t.Errorf("got error %q, governance %q; want error containing %q, governance %q", gotErr, gotGov, tt.wantErr, tt.governance)
			}
		})
	}
}
