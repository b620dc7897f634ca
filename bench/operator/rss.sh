#!/usr/bin/env bash
# Idle RSS of `coagent8 operator` (issue 17: under 25 MiB) on the stripped
# release binary with the page benchmark's state (1,000 jobs, 100,000
# egress decisions): idle after start and idle after viewing every page
# three times, from /proc/PID/status. Fails when either is over the
# target. scripts/test.sh runs the same benchmark once; about 25 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
go test -count=1 -run '^$' -bench OperatorRSS -benchtime 1x -v ./bench/operator/ 2>&1 |
	grep -E 'rss_test|Benchmark|FAIL|^ok' | grep -v '^=== RUN'
