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
for t in srt codex; do [ -x "$tools/$t" ] || { echo "missing $tools/$t (npm install --prefix $root/.tools ...)" >&2; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/coagent8" ./cmd/coagent8)
(cd "$root" && go build -o "$tmp/sandboxbench" ./bench/sandbox)
COAGENT8_DIR="$tmp/state" "$tmp/sandboxbench" -coagent8 "$tmp/coagent8" -tools "$tools" -n "${1:-30}"
echo
echo "in-process Go API (no coagent8 CLI start-up):"
(cd "$root" && CGO_ENABLED=0 go test ./internal/sandbox/ -run '^$' -bench RunTrue -benchtime 50x | grep Benchmark)
