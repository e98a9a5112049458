#!/usr/bin/env bash
# Builds the controller of a previous commit for make test-upgrade: a detached git
# worktree of COMMIT under OUT (kept between runs; its libraries and deploy/local are
# what the previous release installed) and its bin/haptic.
#   scripts/build-previous.sh COMMIT OUT   → prints OUT/COMMIT
set -euo pipefail
commit=$1 out=$2
GO=${GO:-go}
dir=$out/$commit
if [ ! -e "$dir/.git" ]; then
	mkdir -p "$out"
	git worktree add --detach "$dir" "$commit" >&2
fi
if [ ! -x "$dir/bin/haptic" ]; then
	(cd "$dir" && $GO build -o bin/haptic ./cmd/haptic) >&2
fi
echo "$dir"
