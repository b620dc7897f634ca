package review

// Block returns res forced to BLOCKED for reason (e.g. a failing
// configured check, issue 8), with the answer's first VERDICT line
// rewritten as the gate does. A result that is already BLOCKED is
// returned unchanged: the contract's own reason keeps precedence (§3).
func Block(res Result, reason string) Result {
	if res.Verdict == Blocked {
		return res
	}
	res.Verdict, res.Reason, res.Text = Blocked, reason, parse(res.Text).rewrite()
	return res
}
