// Package quarantine holds a delegated agent's candidate patch as untrusted
// bytes (issue 16 scope 3; requirements ): it builds a
// binary-safe Git patch (renames, mode changes) from the candidate's
// changed-file set ([internal/candidate.Change]), scans it, and renders any
// untrusted text only inside a provenance-tagged, instruction-fenced block
// redacted with the answer profile.
//
// # What the patch carries
//
// The patch is exactly what Git can represent: regular files (mode 100644
// or 100755), symbolic links and deletions. A change Git cannot represent
// (a path into .git, a device, FIFO or socket, a path outside the
// workspace) is left out of the patch and reported as a blocking finding;
// setuid, setgid and sticky bits are dropped and reported. Admission
// ([internal/admission]) applies the patch and nothing else, so what the
// user sees in the scan is a superset of what can reach the checkout.
//
// # Security model
//
// A scan result is data: it never executes, applies or promotes anything.
// Blocking findings taint the candidate (admission then needs the user to
// acknowledge the taint). Building the patch writes objects only into a
// scratch object directory ([internal/gitrepo.Scratch]), never into the
// user's repository, and reads the agent's files through an [os.Root], so a
// symbolic link the agent planted cannot make the build read host files.
// Finding messages never quote added content: a credential is reported by
// kind and line, never by value.
package quarantine
