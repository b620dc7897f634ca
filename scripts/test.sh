#!/usr/bin/env bash
# Runs coagent8's whole test suite on a fresh machine: installs what the
# tests need (scripts/install.sh), checks formatting and vet, cross-compiles
# for darwin and windows, then runs every test (nothing is skipped: tests
# that need the pinned CLIs or kernel features fail if they are missing),
# the concurrency-sensitive packages again under the race detector, and
# each benchmark-only package's benchmarks once (so they are known to run).
#
# Every stage runs even when an earlier one failed; the script ends with
# one summary line, "N passed, M failed" (tests over all stages; a failed
# stage with no failing test, such as gofmt or a build error, counts as
# one failure), and exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

# gotestsum renders go test's JSON stream readably and keeps it for the
# summary; run from the module proxy at a pinned version (not a
# dependency of coagent8 itself).
GOTESTSUM=gotest.tools/gotestsum@v1.13.0

if ! bash scripts/install.sh --no-doctor; then
	echo "test: install failed"
	echo "0 passed, 1 failed"
	exit 1
fi

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
failed_stages=()

# stage NAME CMD...: runs one stage and records its failure.
stage() {
	local name=$1
	shift
	echo "test: $name"
	if ! "$@"; then
		echo "test: $name FAILED"
		failed_stages+=("$name")
	fi
}

gofmt_clean() {
	local unformatted
	# gofmt exits non-zero on a file it cannot parse: that fails too.
	unformatted=$(gofmt -l cmd internal bench) || return 1
	[ -z "$unformatted" ] && return 0
	echo "gofmt would change:"
	echo "$unformatted"
	return 1
}

cross_compile() {
	local os arch rc=0
	for os in darwin windows; do
		for arch in amd64 arm64; do
			CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -o /dev/null ./cmd/coagent8 || rc=1
		done
	done
	# Linux on arm64 builds too: the task sandbox is amd64-only there
	# (its fork path is assembly) and must refuse, not fail to compile.
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -o /dev/null ./cmd/coagent8 || rc=1
	# Tests too must compile off Linux (vet type-checks _test.go files).
	for os in darwin windows; do
		CGO_ENABLED=0 GOOS=$os GOARCH=amd64 go vet ./... || rc=1
	done
	return $rc
}

# gotests NAME GO-TEST-ARGS...: go test through gotestsum; the JSON stream
# is kept under NAME for the summary.
gotests() {
	local name=$1
	shift
	go run "$GOTESTSUM" --format pkgname-and-test-fails \
		--jsonfile "$results/$name.json" -- "$@"
}

# Benchmark-only packages (no Test function) run their benchmarks once
# instead of being reported as packages with no tests to run.
bench_only=()
for d in bench/*/; do
	[ -f "$d/go.mod" ] && continue # its own module (bench/redact): run by its run.sh
	compgen -G "$d*_test.go" >/dev/null || continue
	grep -qs '^func Test' "$d"*_test.go || bench_only+=("./${d%/}")
done
if ! all_pkgs=$(go list ./...); then
	echo "test: go list ./... failed"
	echo "0 passed, 1 failed"
	exit 1
fi
mapfile -t test_pkgs < <(grep -v -x -F -f <(for p in "${bench_only[@]}"; do go list "$p"; done; echo __none__) <<<"$all_pkgs")

race_pkgs=()
for p in ./internal/process ./internal/turn ./internal/gate/... ./internal/session/... ./internal/config ./internal/egress/... ./internal/allowance ./internal/mcpserver ./internal/adapter/codex/jsonrpc; do
	compgen -G "${p%/...}/*.go" >/dev/null && race_pkgs+=("$p")
done

stage gofmt gofmt_clean
stage "go vet" go vet ./...
stage "cross-compile darwin/windows (amd64, arm64; tests vetted), linux/arm64" cross_compile
stage "go test" gotests all -count=1 -timeout 20m "${test_pkgs[@]}"
stage "go test -race (concurrency-sensitive packages)" gotests race -count=1 -race -timeout 15m "${race_pkgs[@]}"
# The task sandbox forks PID 1 from goroutines while the runtime runs
# (internal/sandbox/fork_linux.go): its concurrency tests under -race
# (the whole package would spend minutes qualifying under the detector).
stage "go test -race (task sandbox concurrency)" gotests sandbox-race -count=1 -race -timeout 10m \
	-run 'TestConcurrent|TestCancel|TestSupervisorKill|TestNoDescriptorLeak|TestRunShell|TestStale' ./internal/sandbox/
if [ ${#bench_only[@]} -gt 0 ]; then
	# Here they prove the benchmarks run; docs/PERFORMANCE.md has the full
	# measurements (bench/admission at 100,000 files spends a minute just
	# generating its checkout, so the suite uses a 20,000-file one).
	stage "benchmarks, once each (${bench_only[*]})" env ADMISSION_FILES="${ADMISSION_FILES:-20000}" go test -count=1 -run '^$' -bench . -benchtime 1x "${bench_only[@]}"
fi

# Count test results (top-level tests and subtests) over every stage. A
# package that failed with no failing test (a build error, a panic or
# os.Exit in TestMain, a timeout) counts once.
count_passed() { cat "$results"/*.json 2>/dev/null | grep -E '"Action":"pass"' | grep -c '"Test":'; }
count_failed() {
	awk '/"Action":"fail"/ {
		match($0, /"Package":"[^"]*"/); pkg = FILENAME substr($0, RSTART, RLENGTH)
		if ($0 ~ /"Test":/) { tests[pkg]++; n++ } else { pkgs[pkg] = 1 }
	}
	END { for (p in pkgs) if (!(p in tests)) n++; print n + 0 }' "$results"/*.json 2>/dev/null || echo 0
}
passed=$(count_passed)
failed=$(count_failed)
# A stage that failed with nothing counted above (gofmt, vet, a failing
# build outside go test) still counts once.
for s in "${failed_stages[@]}"; do
	case $s in
	"go test") f=all ;;
	"go test -race (concurrency-sensitive packages)") f=race ;;
	"go test -race (task sandbox concurrency)") f=sandbox-race ;;
	*) f= ;;
	esac
	if [ -z "$f" ] || ! grep -qE '"Action":"fail"' "$results/$f.json" 2>/dev/null; then
		failed=$((failed + 1))
	fi
done
if [ ${#failed_stages[@]} -gt 0 ]; then
	printf 'test: failed stages:'
	printf ' [%s]' "${failed_stages[@]}"
	echo
fi
echo "$passed passed, $failed failed"
[ ${#failed_stages[@]} -eq 0 ] && [ "$failed" -eq 0 ]
