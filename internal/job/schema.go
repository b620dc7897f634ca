package job

import "github.com/coagent8/coagent8/internal/store"

// migrations of component "jobs". Times are Unix milliseconds.
var migrations = []store.Migration{{Version: 1, SQL: `
CREATE TABLE jobs (
	id               TEXT PRIMARY KEY,
	workspace        TEXT NOT NULL,
	base             TEXT NOT NULL,
	backend          TEXT NOT NULL,
	model            TEXT NOT NULL,
	budget           TEXT NOT NULL,
	state            TEXT NOT NULL,
	reason           TEXT NOT NULL DEFAULT '',
	supervisor_pid   INTEGER NOT NULL,
	supervisor_start INTEGER NOT NULL,
	created_at       INTEGER NOT NULL,
	updated_at       INTEGER NOT NULL,
	expires_at       INTEGER NOT NULL,
	patch            BLOB,
	patch_digest     TEXT NOT NULL DEFAULT '',
	findings         TEXT NOT NULL DEFAULT '[]',
	message          BLOB,
	admitted_by      TEXT NOT NULL DEFAULT '',
	admitted_digest  TEXT NOT NULL DEFAULT '',
	admitted_at      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_workspace ON jobs(workspace, created_at);
CREATE INDEX jobs_running ON jobs(state) WHERE state = 'running';
`}, {Version: 2, SQL: `
-- Quarantine evidence (issue 16 scope 7): bounded, secret-free JSON
-- written by Store.Quarantine.
ALTER TABLE jobs ADD COLUMN evidence TEXT NOT NULL DEFAULT '';
`}, {Version: 3, SQL: `
-- The user's checks on the candidate (issue 16 scope 4): a JSON
-- Verification, '' for a job stored before this column existed or one
-- whose candidate was never attached.
ALTER TABLE jobs ADD COLUMN checks TEXT NOT NULL DEFAULT '';
`}}
