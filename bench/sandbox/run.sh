#!/bin/sh
# Task-sandbox benchmark (issue 8): median wall time of
# `coagent8 sandbox run -- /usr/bin/true` vs bare exec, bwrap, srt and
# `codex sandbox`, all in one run. Needs: Debian bubblewrap, socat, ripgrep;
# npm @anthropic-ai/sandbox-runtime and @openai/codex in .tools.
# Usage: bench/sandbox/run.sh [runs]   (from anywhere inside the module)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tools="$root/.tools/node_modules/.bin"
for t in bwrap socat rg; do command -v $t >/dev/null || { echo "missing $t (apt-get install bubblewrap socat ripgrep)" >&2; exit 1; }; done
# srt is only a benchmark baseline, so scripts/install.sh does not install
# it; install the pinned version next to the pinned CLIs on first use.
if [ ! -x "$tools/srt" ]; then
	echo "installing @anthropic-ai/sandbox-runtime@0.0.83 into $root/.tools (benchmark baseline)" >&2
	npm install --prefix "$root/.tools" --no-audit --no-fund --silent @anthropic-ai/sandbox-runtime@0.0.83 >&2
fi
[ -x "$tools/codex" ] || { echo "missing $tools/codex: run 'bash scripts/install.sh' first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/coagent8" ./cmd/coagent8)
(cd "$root" && go build -o "$tmp/sandboxbench" ./bench/sandbox)
COAGENT8_DIR="$tmp/state" "$tmp/sandboxbench" -coagent8 "$tmp/coagent8" -tools "$tools" -n "${1:-30}"
echo
echo "in-process Go API (no coagent8 CLI start-up):"
(cd "$root" && CGO_ENABLED=0 go test ./internal/sandbox/ -run '^$' -bench RunTrue -benchtime 50x | grep Benchmark)
