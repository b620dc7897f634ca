package sandbox

import (
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// Status is what doctor shows about the task sandbox on this host. It runs
// no probe and starts nothing.
type Status struct {
	// Available reports whether every required kernel capability is
	// present (Landlock ABI, user namespaces, cgroups with cgroup.kill and
	// the limit controllers).
	Available bool `json:"available"`
	// Missing names the first missing capability when not Available.
	Missing string `json:"missing,omitempty"`
	// Qualified reports whether a passing qualification record matches
	// this binary, kernel and policy; without one the next run qualifies
	// first (about 0.3 s here) or `coagent8 sandbox qualify` does it now.
	Qualified   bool       `json:"qualified"`
	QualifiedAt *time.Time `json:"qualifiedAt,omitempty"`
	// Advice is the next step when Available but not Qualified
	// ([QualifyAdvice]); "" otherwise (issue 18 item 5: doctor showed
	// qualified:false with no way forward).
	Advice string `json:"advice,omitempty"`
}

// QualifyAdvice is [Status.Advice] for an available, unqualified sandbox.
const QualifyAdvice = "run `coagent8 sandbox qualify` to qualify this binary on this host now " +
	"(otherwise the first sandboxed run qualifies first)"

// Status reports the sandbox's readiness on this host without running
// anything (doctor).
func (s *Sandbox) Status() Status {
	if err := s.hostReady(); err != nil {
		st := Status{Missing: err.Error()}
		if fe := fault.From(err); fe != nil {
			st.Missing = fe.Message
			if m := fe.Details["missing"]; m != "" {
				st.Missing = m
			}
		}
		return st
	}
	st := Status{Available: true}
	id, err := currentIdentity()
	if err != nil {
		return st
	}
	if q, err := loadRecord(id.file(s.cfg.StateDir)); err == nil && q.matches(id) {
		t := q.Time
		st.Qualified, st.QualifiedAt = true, &t
	}
	if !st.Qualified {
		st.Advice = QualifyAdvice
	}
	return st
}
