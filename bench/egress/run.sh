#!/usr/bin/env bash
# Egress decision benchmarks (issue 10): decision latency p50/p99 for a
# ~100 KB Anthropic Messages body and fingerprinting throughput.
# Budget: the decision adds at most 1 ms p99 for a 100 KB body.
# Usage: bash bench/egress/run.sh   (from the module root)
set -euo pipefail
cd "$(dirname "$0")/../.."
go test -run '^$' -bench 'Fingerprint|Decide|Classify' -benchtime 3s -count "${COUNT:-3}" ./internal/egress/
