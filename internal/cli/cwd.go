package cli

import "os"

// cwd returns the working directory for terminal commands ("" if unknown,
// which the workspace validation then reports).
func (a *app) cwd() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	return d
}
