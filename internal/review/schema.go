package review

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Schema returns the JSON Schema (draft 2020-12) of [Envelope], fresh on
// every call so callers may modify it. It follows OpenAI strict structured
// output rules (every object closed, every property required, optional
// values nullable), so it can be passed as Codex turn/start outputSchema and
// as Claude --json-schema. Source: peers.md (codex-plugin-cc review schema,
// of which this is a superset), contract.md §3.
func Schema() map[string]any {
	str := func() map[string]any { return map[string]any{"type": "string", "minLength": 1} }
	enum := func(v ...string) map[string]any { return map[string]any{"type": "string", "enum": v} }
	finding := closed(map[string]any{
		"severity":   enum("P1", "P2", "P3"),
		"title":      str(),
		"file":       str(),
		"line":       map[string]any{"type": []string{"integer", "null"}, "minimum": 1},
		"line_end":   map[string]any{"type": []string{"integer", "null"}, "minimum": 1},
		"problem":    str(),
		"evidence":   map[string]any{"type": "string"},
		"fix":        map[string]any{"type": "string"},
		"confidence": map[string]any{"type": []string{"number", "null"}, "minimum": 0, "maximum": 1},
	})
	s := closed(map[string]any{
		"review":     str(),
		"snapshot":   str(),
		"coverage":   enum(CoverageComplete, CoveragePartial),
		"verdict":    enum(string(Ready), string(Blocked)),
		"summary":    str(),
		"findings":   map[string]any{"type": "array", "items": finding},
		"checks":     closed(map[string]any{"typecheck": enum(checkValues...), "tests": enum(checkValues...)}),
		"next_steps": map[string]any{"type": "array", "items": str()},
	})
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["title"] = "coagent8 review State Envelope"
	return s
}

var checkValues = []string{"PASS", "FAIL", "NOT_RUN"}

// closed returns an object schema whose properties are all required.
func closed(props map[string]any) map[string]any {
	req := make([]string, 0, len(props))
	for k := range props {
		req = append(req, k)
	}
	sort.Strings(req)
	return map[string]any{"type": "object", "additionalProperties": false, "required": req, "properties": props}
}

// Validate reports the first way e violates [Schema], or nil.
func Validate(e Envelope) error {
	var errs []error
	need := func(ok bool, format string, a ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	need(strings.TrimSpace(e.Review) != "", "review: must not be empty")
	need(strings.TrimSpace(e.Snapshot) != "", "snapshot: must not be empty")
	need(e.Coverage == CoverageComplete || e.Coverage == CoveragePartial, "coverage: %q is not COMPLETE or PARTIAL", e.Coverage)
	need(e.Verdict == Ready || e.Verdict == Blocked, "verdict: %q is not READY or BLOCKED", e.Verdict)
	need(strings.TrimSpace(e.Summary) != "", "summary: must not be empty")
	need(oneOf(e.Checks.Typecheck, checkValues), "checks.typecheck: %q is not PASS, FAIL or NOT_RUN", e.Checks.Typecheck)
	need(oneOf(e.Checks.Tests, checkValues), "checks.tests: %q is not PASS, FAIL or NOT_RUN", e.Checks.Tests)
	for i, f := range e.Findings {
		if err := validFinding(f); err != nil {
			errs = append(errs, fmt.Errorf("findings[%d].%w", i, err))
		}
	}
	for i, s := range e.NextSteps {
		need(strings.TrimSpace(s) != "", "next_steps[%d]: must not be empty", i)
	}
	return errors.Join(errs...)
}

func validFinding(f Finding) error {
	switch {
	case f.Severity != P1 && f.Severity != P2 && f.Severity != P3:
		return fmt.Errorf("severity: %q is not P1, P2 or P3", f.Severity)
	case strings.TrimSpace(f.Title) == "", strings.TrimSpace(f.File) == "", strings.TrimSpace(f.Problem) == "":
		return errors.New("title, file, problem: must not be empty")
	case f.Line < 0, f.LineEnd < 0, f.LineEnd != 0 && f.LineEnd < f.Line:
		return fmt.Errorf("line: %d..%d is not a valid 1-based range", f.Line, f.LineEnd)
	case f.Confidence != nil && (*f.Confidence < 0 || *f.Confidence > 1):
		return fmt.Errorf("confidence: %v is outside 0..1", *f.Confidence)
	}
	return nil
}

func oneOf(v string, set []string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

// decodeJSON reads an answer that is one JSON object meeting [Schema]
// (optionally inside one ```json fence). ok is false for anything else; the
// text gate then judges the answer as it is.
func decodeJSON(answer string) (Envelope, bool) {
	s := strings.TrimSpace(answer)
	if body, ok := strings.CutPrefix(s, "```json"); ok {
		s = strings.TrimSpace(strings.TrimSuffix(body, "```"))
	}
	if !strings.HasPrefix(s, "{") {
		return Envelope{}, false
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	var e Envelope
	if dec.Decode(&e) != nil || dec.More() || Validate(e) != nil {
		return Envelope{}, false
	}
	return e, true
}
