// Package admission applies a delegate job's quarantined candidate patch to
// the user's checkout, only when the user admits it (issue 16 scope 5;
// No MCP tool reaches it: the terminal (`coagent8 admit`) and the
// operator surface call it on the user's behalf.
//
// # All or nothing
//
// An admission is planned entirely outside the checkout, then committed in
// one atomic step and rolled forward:
//
//  1. Plan (nothing written to the checkout or the user's index): a scratch
//     index ([internal/gitrepo.Scratch]) holds the checkout's current
//     version of exactly the paths the patch touches; `git apply --cached`
//     applies the patch to it, falling back to `--3way` when the checkout
//     moved since the base. A conflict is reported with its paths and the
//     admission ends: the checkout is byte-identical.
//  2. Stage: `git checkout-index --prefix` writes every new file, symlink
//     and mode (with the same content conversion git apply uses for the
//     work tree) into a staging directory inside the repository's git
//     directory (the same file system as the work tree, so rename(2) is
//     atomic); the files are fsynced. A pending marker in the state
//     directory, flock'ed by the admitting process, announces it.
//  3. Commit: the journal (the list of renames and removals) is written,
//     fsynced and renamed into place. This rename is the commit point.
//  4. Roll forward: each operation is idempotent (rename a staged file over
//     its target, remove a deleted path). Then the job is marked admitted
//     with the actor and the digest of the admitted bytes, a security event
//     is recorded, and the journal and staging directory are removed.
//
// When the checkout holds every preimage byte for byte (the patch's
// full-index blob ids and modes) and no attributes file exists, steps 1–2
// are one `git apply` of the patch to copies of the preimages in the
// staging directory, run outside any repository (fast.go); otherwise the
// scratch index above is used.
//
// A kill -9 before the commit point leaves the checkout untouched (the
// next [New] removes the staging directory); after it, the next [New]
// finishes the journal before anything else can read or admit. Between the
// kill and that restart the checkout can show a prefix of the renames; no
// file is ever half-written, because every file arrives by rename. The
// alternative, `git apply --index` after `--check`, writes files one by one
// with no record of where it stopped.
//
// The checkout's touched paths are stat'ed when planned and again just
// before the commit point; a change in between refuses the admission
// (admission.checkout_changed) without writing.
//
// # Security model
//
// A job is admissible only when succeeded, or tainted with the taint
// acknowledged by the user, before its expiry, and only into its own
// workspace; everything else is a typed POLICY_DENIED. The patch's digest
// is checked against the one recorded when the candidate was quarantined.
// Only paths the patch names are written, and the plan refuses any path the
// scan would refuse (.git, outside the work tree).
package admission
