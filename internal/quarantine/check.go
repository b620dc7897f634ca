package quarantine

// CheckBody is the untrusted body of one check's output as a [Fenced]
// block of kind "check" shows it: the check ran the agent's candidate
// code, so what it printed is the agent's as much as the patch is. The
// tails are already bounded and redacted by the verifier
// (verify.Check's StdoutTail and StderrTail); [Render] redacts again
// with the answer profile and escapes controls.
func CheckBody(stdout, stderr string) []byte {
	return []byte("stdout:\n" + stdout + "\nstderr:\n" + stderr + "\n")
}

// RenderCheck is [Render] of one check's output on job's candidate,
// profile "verify", kind "check".
func RenderCheck(job, stdout, stderr string) string {
	return Render(Fenced{Job: job, Profile: "verify", Kind: "check", Body: CheckBody(stdout, stderr)})
}
