#!/usr/bin/env bash
# Runs coagent8's whole test suite on a fresh machine: installs what the
# tests need (scripts/install.sh), checks formatting and vet, cross-compiles
# for darwin and windows, then runs every test (nothing is skipped: tests
# that need the pinned CLIs or kernel features fail if they are missing),
# and the concurrency-sensitive packages again under the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh --no-doctor

echo "test: gofmt"
unformatted=$(gofmt -l cmd internal)
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
echo "test: go vet"
go vet ./...
echo "test: cross-compile darwin/windows (amd64, arm64)"
for os in darwin windows; do
	for arch in amd64 arm64; do
		CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -o /dev/null ./cmd/coagent8
	done
done
echo "test: go test ./..."
go test -count=1 -timeout 20m ./...
echo "test: go test -race (concurrency-sensitive packages)"
race_pkgs=()
for p in ./internal/process ./internal/turn ./internal/gate/... ./internal/session/... ./internal/config ./internal/egress/...; do
	compgen -G "${p%/...}/*.go" >/dev/null && race_pkgs+=("$p")
done
go test -count=1 -race -timeout 15m "${race_pkgs[@]}"
# The task sandbox forks PID 1 from goroutines while the runtime runs
# (internal/sandbox/fork_linux.go): its concurrency tests under -race
# (the whole package would spend minutes qualifying under the detector).
go test -count=1 -race -timeout 10m -run 'TestConcurrent|TestCancel|TestSupervisorKill|TestNoDescriptorLeak|TestRunShell|TestStale' ./internal/sandbox/
echo "test: all passed"
