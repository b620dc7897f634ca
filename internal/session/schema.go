package session

import "github.com/coagent8/coagent8/internal/store"

// migrations of component "sessions". Times are Unix milliseconds.
var migrations = []store.Migration{{Version: 1, SQL: `
CREATE TABLE sessions (
	handle       TEXT PRIMARY KEY,
	workspace    TEXT NOT NULL,
	backend      TEXT NOT NULL,
	native_id    TEXT NOT NULL DEFAULT '',
	model        TEXT NOT NULL DEFAULT '',
	closed       INTEGER NOT NULL DEFAULT 0,
	turn_count   INTEGER NOT NULL DEFAULT 0,
	lease_owner  TEXT NOT NULL DEFAULT '',
	cancel_req   INTEGER NOT NULL DEFAULT 0,
	revision     INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER NOT NULL
);
CREATE INDEX sessions_workspace ON sessions(workspace, backend, last_used_at);
CREATE INDEX sessions_owner ON sessions(lease_owner) WHERE lease_owner != '';
CREATE TABLE turns (
	handle     TEXT NOT NULL REFERENCES sessions(handle) ON DELETE CASCADE,
	turn       INTEGER NOT NULL,
	status     TEXT NOT NULL,
	owner      TEXT NOT NULL,
	model      TEXT NOT NULL DEFAULT '',
	err_code   TEXT NOT NULL DEFAULT '',
	reason     TEXT NOT NULL DEFAULT '',
	started_at INTEGER NOT NULL,
	ended_at   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (handle, turn)
);
CREATE INDEX turns_running ON turns(owner) WHERE status = 'running';
CREATE TABLE messages (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	handle     TEXT NOT NULL REFERENCES sessions(handle) ON DELETE CASCADE,
	turn       INTEGER NOT NULL,
	role       TEXT NOT NULL,
	body       TEXT NOT NULL,
	bytes      INTEGER NOT NULL,
	complete   INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX messages_handle ON messages(handle, seq);
CREATE TABLE deltas (
	handle TEXT NOT NULL REFERENCES sessions(handle) ON DELETE CASCADE,
	turn   INTEGER NOT NULL,
	part   INTEGER NOT NULL,
	body   TEXT NOT NULL,
	PRIMARY KEY (handle, turn, part)
);
`}}
