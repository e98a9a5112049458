#!/usr/bin/env bash
# Regenerates cmd/haptic/default.pgo, the profile `go build` optimizes the controller
# with (profile-guided optimization): the CPU profiles of the render benchmark
# (scripts/test-benchmark.sh: full renders and re-renders of both default libraries
# at 5,000 routes), merged. Run it after changes to the render path or the libraries.
set -euo pipefail

cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/test-benchmark.sh --steps 5000 --iterations 21 --cpu-profiles "$work" >/dev/null
go tool pprof -proto "$work/ingress.prof" "$work/httproute.prof" >cmd/haptic/default.pgo
echo "wrote cmd/haptic/default.pgo ($(wc -c <cmd/haptic/default.pgo) bytes)"
