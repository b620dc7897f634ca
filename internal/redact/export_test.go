package redact

// FullScan is the one-shot redaction without the prefilter (the scan
// from byte 0, as before issue 18's prefilter): the reference the
// prefilter's differential tests compare against.
func FullScan(r *Redactor, p []byte) []byte {
	out, _ := r.redactFrom(p, 0)
	return out
}

// TokenPrefixes lists the prefixed formats' anchors, so a test can build
// one token of every format.
func TokenPrefixes() []string {
	var ps []string
	for _, t := range tokenRules {
		ps = append(ps, t.prefix)
	}
	return ps
}
