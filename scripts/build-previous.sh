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
# The previous release's Gateway API experimental CRDs (the test starts the cluster
# on them), copied from the module cache beside this tree's, as
# localcluster/build-binaries.sh copies those: a fresh machine has only this tree's.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
k8s_version=$(awk '$1=="k8s.io/kubernetes"{print $2; exit}' "$here/localcluster/k8sbin/go.mod")
gwapi=$(cd "$dir" && $GO list -m -f '{{.Version}}' sigs.k8s.io/gateway-api)
crds=${HAPTIC_CACHE:-/var/cache/haptic}/k8s-$k8s_version/gateway-api-$gwapi-experimental-crds
if [ ! -e "$crds/.complete" ]; then
	src=$(cd "$dir" && $GO mod download -json sigs.k8s.io/gateway-api | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	rm -rf "$crds" && mkdir -p "$crds"
	cp "$src"/config/crd/experimental/gateway.networking.*.yaml "$crds/"
	touch "$crds/.complete"
	echo "== gateway-api $gwapi experimental CRDs copied to $crds" >&2
fi
echo "$dir"
