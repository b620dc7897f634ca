// Package e2e holds end-to-end tests: the built coagent8 binary started
// over stdio by the official MCP SDK client, driving the pinned real CLIs
// against local provider doubles on 127.0.0.1.
package e2e
