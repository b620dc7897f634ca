#!/usr/bin/env bash
# Consult overhead (coagent8 consult vs bare claude -p against the same
# local double, same run), MCP server start-to-tools/list latency and idle
# RSS. Needs the pinned CLIs: bash scripts/install.sh --no-doctor
set -euo pipefail
cd "$(dirname "$0")/../.."
go test -tags bench -count=1 -v -run 'TestConsultOverhead|TestServerStartAndIdleMemory' ./bench/consult 2>&1 | grep -v '^=== RUN\|^--- PASS\|^PASS\|^ok '
