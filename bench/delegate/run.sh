#!/bin/sh
# Candidate-workspace benchmark (issue 15, Performance): overlay candidate
# view in a fresh user namespace vs `cp -a --reflink=auto` vs `git worktree
# add --detach` on the same committed tree, in one run, plus
# candidate.Changes for a 10-file edit. Needs git, coreutils cp, and user
# namespaces that may mount overlayfs (Linux >= 5.11).
# Usage: bench/delegate/run.sh          (20,000 files in 200 dirs, 10 KiB each)
#        DELEGATE_FILES=100000 bench/delegate/run.sh   (~1 GB tree)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/delegatebench" ./bench/delegate)
"$tmp/delegatebench" -files "${DELEGATE_FILES:-20000}" -ndirs "${DELEGATE_DIRS:-200}" "$@"
