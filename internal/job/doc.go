// Package job is the durable store of delegate jobs (issue 16 scope 6): one
// row per job in the state database (component "jobs"), with its spec
// (workspace, base, backend, model, budget), its state, its supervisor's
// identity, and its quarantined candidate (patch bytes, digest, findings,
// the agent's final message).
//
// # States
//
// A job is created running. It ends succeeded (a candidate is attached),
// failed, cancelled or tainted; a candidate then becomes admitted, rejected
// or expired. Every transition is a compare-and-set on the current state,
// so two surfaces cannot both admit or both reject.
//
// # Supervisor death
//
// Create records the supervising process's pid and start time (Linux:
// /proc/<pid>/stat field 22). [Open] marks every running job whose
// supervisor is gone, or whose pid now belongs to another process, as
// failed with reason job.supervisor_gone. Where the start time cannot be
// read (other platforms, where no delegate job can run), a running job
// found by Open is failed too: fail closed.
//
// # Quarantine
//
// [Store.Quarantine] is the compromise response (issue 16 scope 7): the
// job's grants are revoked first (through a [Revoker], the gate), its
// tree ended through the caller's handle when it has one, and the job
// tainted with bounded, secret-free [Evidence] (ids, states and codes).
// A tainted job's candidate is admissible only with the taint
// acknowledged.
package job
