#!/usr/bin/env bash
# Codex backend overhead: coagent8's verified app-server turn vs a direct
# `codex exec --json` of the same prompt against the same local Responses
# double, interleaved in one run. Needs the pinned Codex CLI under .tools.
set -euo pipefail
cd "$(dirname "$0")/../.."
go test -tags bench -count=1 -v -run 'TestCodexOverhead' ./bench/codex 2>&1 | grep -v '^=== RUN\|^--- PASS\|^PASS\|^ok '
