#!/usr/bin/env bash
# Installs everything coagent8 and its tests need on a fresh Debian/Ubuntu
# machine with Go and Node/npm, builds bin/coagent8, and runs
# `coagent8 doctor` as a smoke check.
#
# - Go modules through the module proxy (go mod download).
# - The pinned coding-agent CLIs from the npm registry into the git-ignored
#   project folder .tools/ (no global install).
# - Debian packages used by tests and benchmarks, including chromium for the
#   operator dashboard's browser tests (only when run as root and
#   a package is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

CLAUDE_VERSION=2.1.328
CODEX_VERSION=0.169.0
# The official MCP Inspector; its --cli validates every tool result against
# the tool's outputSchema in internal/e2e (issue 19).
INSPECTOR_VERSION=2.12.0
DEBIAN_PACKAGES=(git bubblewrap socat ripgrep nginx iproute2 chromium)

log() { printf 'install: %s\n' "$*" >&2; }

# The one option is --no-doctor; anything else (a typo such as --nodoctor)
# is refused rather than ignored, so the run does what was asked.
case "$#:${1:-}" in
0: | 1:--no-doctor) ;;
*)
	log "usage: bash scripts/install.sh [--no-doctor]  (got: $*)"
	exit 2
	;;
esac

install_debian() {
	local missing=()
	for p in "${DEBIAN_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		log "missing Debian packages (install them as root): ${missing[*]}"
		return 0
	fi
	log "apt-get install ${missing[*]}"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

install_clis() {
	local want_claude want_codex want_inspector
	want_claude=".tools/node_modules/@anthropic-ai/claude-code/package.json"
	want_codex=".tools/node_modules/@openai/codex/package.json"
	want_inspector=".tools/node_modules/@modelcontextprotocol/inspector/package.json"
	if grep -q "\"version\": \"$CLAUDE_VERSION\"" "$want_claude" 2>/dev/null &&
		grep -q "\"version\": \"$CODEX_VERSION\"" "$want_codex" 2>/dev/null &&
		grep -q "\"version\": \"$INSPECTOR_VERSION\"" "$want_inspector" 2>/dev/null; then
		return 0
	fi
	log "npm install @anthropic-ai/claude-code@$CLAUDE_VERSION @openai/codex@$CODEX_VERSION @modelcontextprotocol/inspector@$INSPECTOR_VERSION into .tools/"
	mkdir -p .tools
	npm install --prefix .tools --no-audit --no-fund --loglevel=error \
		"@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" \
		"@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >&2
	.tools/node_modules/.bin/claude --version >&2
	.tools/node_modules/.bin/codex --version >&2
}

install_debian
log "go mod download"
go mod download
install_clis
log "go build -o bin/coagent8 ./cmd/coagent8"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o bin/coagent8 ./cmd/coagent8
if [ "${1:-}" != "--no-doctor" ]; then
	log "bin/coagent8 doctor (with the pinned CLIs from .tools/ first on PATH)"
	PATH="$PWD/.tools/node_modules/.bin:$PATH" ./bin/coagent8 doctor
	# A later `bin/coagent8 doctor` looks on the user's own PATH and may
	# list no backend: say so here, so the two runs do not seem to disagree.
	log "that doctor run found the pinned CLIs in .tools/ because this script put them first on PATH;" \
		"bin/coagent8 doctor on its own looks on your PATH (or CLAUDE_PATH / CODEX_PATH; see the README's Next steps)"
fi
