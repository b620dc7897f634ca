package review

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Patterns compile on first use (sync.OnceValue), not at package init,
// which every coagent8 process start pays, the sandbox helper included
// (issue 8 performance).
// Headers count only at line start, case-insensitive (contract.md §3).
// SUMMARY is coagent8's optional addition and never gates.
var (
	headerRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(REVIEW|SNAPSHOT|COVERAGE|VERDICT|CHECKS|SUMMARY)[ \t]*:(.*)$`)
	})
	endRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^END_REVIEW\b(.*)$`) })
	blockerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\[P[12]\]`) })
	// A finding needs "[Px] <file>:<line>" at line start (an optional list
	// bullet allowed); a "[P1]" elsewhere is prose, not a second finding.
	findingRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^[ \t]*(?:[-*+][ \t]+)?\[(P[123])\][ \t]+(\S+?):(\d+)(?:[-–](\d+))?(?::\d+)?(?:(?:[ \t]*[:—–-][ \t]*|[ \t]+)(.*))?$`)
	})
	fieldRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^[ \t]*(?:[-*+][ \t]+)?(problem|evidence|fix)[ \t]*:[ \t]*(.*)$`)
	})
	checkRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(typecheck|tests)[ \t]*=[ \t]*([A-Z_]+)`) })
)

// header is one occurrence of an envelope header.
type header struct {
	value string // trimmed text after the colon
	line  int
}

// parsed is the line-level reading of an answer.
type parsed struct {
	lines     []string // without trailing "\r"
	headers   map[string][]header
	ends      []header // END_REVIEW occurrences; value = trailing junk
	lastLine  int      // index of the last non-empty line, -1 if none
	findings  []Finding
	blocker   bool
	truncated bool
}

func parse(text string) *parsed {
	p := &parsed{headers: map[string][]header{}, lastLine: -1, blocker: blockerRE().MatchString(text)}
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSuffix(raw, "\r")
		p.lines = append(p.lines, line)
		if strings.TrimSpace(line) != "" {
			p.lastLine = i
		}
	}
	var cur *findingBuilder
	for i, line := range p.lines {
		if m := headerRE().FindStringSubmatch(line); m != nil {
			name := strings.ToUpper(m[1])
			p.headers[name] = append(p.headers[name], header{value: strings.TrimSpace(m[2]), line: i})
			cur = p.flush(cur)
			continue
		}
		if m := endRE().FindStringSubmatch(line); m != nil {
			p.ends = append(p.ends, header{value: strings.TrimSpace(m[1]), line: i})
			cur = p.flush(cur)
			continue
		}
		if m := findingRE().FindStringSubmatch(line); m != nil {
			p.flush(cur)
			cur = newFinding(m)
			continue
		}
		if cur != nil {
			cur.add(line)
		}
	}
	p.flush(cur)
	return p
}

func (p *parsed) flush(b *findingBuilder) *findingBuilder {
	if b != nil {
		p.findings = append(p.findings, b.finding())
	}
	return nil
}

// first returns the first value of a header, or "".
func (p *parsed) first(name string) string {
	if h := p.headers[name]; len(h) > 0 {
		return h[0].value
	}
	return ""
}

// envelope returns what the model reported, without judging it.
func (p *parsed) envelope() Envelope {
	return Envelope{
		Review:   p.first("REVIEW"),
		Snapshot: p.first("SNAPSHOT"),
		Coverage: strings.ToUpper(p.first("COVERAGE")),
		Verdict:  Verdict(strings.ToUpper(p.first("VERDICT"))),
		Summary:  p.first("SUMMARY"),
		Findings: p.findings,
		Checks:   parseChecks(p.first("CHECKS")),
	}
}

func parseChecks(v string) Checks {
	var c Checks
	for _, m := range checkRE().FindAllStringSubmatch(v, -1) {
		switch strings.ToLower(m[1]) {
		case "typecheck":
			c.Typecheck = strings.ToUpper(m[2])
		case "tests":
			c.Tests = strings.ToUpper(m[2])
		}
	}
	return c
}

// findingBuilder accumulates a finding's labelled fields over lines.
type findingBuilder struct {
	f     Finding
	field *string
	parts map[*string][]string
}

func newFinding(m []string) *findingBuilder {
	b := &findingBuilder{parts: map[*string][]string{}}
	b.f.Severity = Severity(strings.ToUpper(m[1]))
	b.f.File = m[2]
	b.f.Line, _ = strconv.Atoi(m[3])
	if m[4] != "" {
		b.f.LineEnd, _ = strconv.Atoi(m[4])
	}
	b.f.Title = strings.TrimSpace(m[5])
	b.field = &b.f.Problem // unlabelled text before a label is the problem
	return b
}

func (b *findingBuilder) add(line string) {
	if m := fieldRE().FindStringSubmatch(line); m != nil {
		switch strings.ToLower(m[1]) {
		case "problem":
			b.field = &b.f.Problem
		case "evidence":
			b.field = &b.f.Evidence
		case "fix":
			b.field = &b.f.Fix
		}
		line = m[2]
	} else {
		// Continuation lines: [Render] indents them by two spaces.
		line = strings.TrimPrefix(line, "  ")
	}
	b.parts[b.field] = append(b.parts[b.field], line)
}

func (b *findingBuilder) finding() Finding {
	for _, dst := range []*string{&b.f.Problem, &b.f.Evidence, &b.f.Fix} {
		*dst = strings.TrimSpace(strings.Join(b.parts[dst], "\n"))
	}
	return b.f
}
