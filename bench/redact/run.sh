#!/usr/bin/env bash
# Runs the redaction benchmark: coagent8's redactor (one-shot and streaming
# in 64-byte chunks) vs gitleaks v8's detector on the same corpora, and
# prints MB/s, allocations per MB and the ratios. Extra flags go to the
# program (e.g. -code-mib 32 -dense-mib 4 -min-time 2s).
set -euo pipefail
cd "$(dirname "$0")"
exec go run . "$@"
