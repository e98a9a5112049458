#!/usr/bin/env bash
# build-binaries.sh builds the local cluster's binaries (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl and the Gateway API echo-basic
# server) from the separate module in localcluster/k8sbin and caches them outside
# the repository, keyed by the Kubernetes version. A warm cache is reused as is.
#
#   HAPTIC_CACHE   cache root (default /var/cache/haptic)
#   GO             go command (default go)
#   GOFLAGS        defaults to -p=2: the machines have 2 cores shared with others
#
# Prints the cache directory as the last line of stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
module="$here/k8sbin"
GO="${GO:-go}"
k8s_version="$(awk '$1=="k8s.io/kubernetes"{print $2; exit}' "$module/go.mod")"
cache="${HAPTIC_CACHE:-/var/cache/haptic}/k8s-${k8s_version}"
export GOFLAGS="${GOFLAGS:--p=2}"

# The stamp ties the cache to the exact module graph, so a version bump rebuilds.
stamp="$(cat "$module/go.mod" "$module/go.sum" | sha256sum | cut -c1-16)"

binaries=(
	"etcd ./cmd/etcd"
	"kube-apiserver ./cmd/kube-apiserver"
	"kube-controller-manager ./cmd/kube-controller-manager"
	"kube-scheduler ./cmd/kube-scheduler"
	"kubectl ./cmd/kubectl"
	"echo-basic sigs.k8s.io/gateway-api/conformance/echo-basic"
)

mkdir -p "$cache"
if [[ "$(cat "$cache/.stamp" 2>/dev/null)" != "$stamp" ]]; then
	rm -f "$cache"/.built-*
fi

total_start=$SECONDS
built=0
for entry in "${binaries[@]}"; do
	name="${entry%% *}"
	pkg="${entry#* }"
	if [[ -x "$cache/$name" && -e "$cache/.built-$name" ]]; then
		echo "== $name: cached" >&2
		continue
	fi
	echo "== $name: building $pkg (cold builds take minutes)" >&2
	start=$SECONDS
	(cd "$module" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags='-s -w' -o "$cache/$name.tmp" "$pkg")
	mv -f "$cache/$name.tmp" "$cache/$name"
	touch "$cache/.built-$name"
	echo "== $name: done in $((SECONDS - start))s" >&2
	built=$((built + 1))
done
# The Gateway API experimental CRDs come from the same module version that
# provides echo-basic (and the Go types): copied from the module cache, never by hand.
gwapi_version="$(cd "$module" && "$GO" list -m -f '{{.Version}}' sigs.k8s.io/gateway-api)"
crds="$cache/gateway-api-${gwapi_version}-experimental-crds"
if [[ ! -e "$crds/.complete" ]]; then
	gwapi_dir="$(cd "$module" && "$GO" mod download -json sigs.k8s.io/gateway-api | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	rm -rf "$crds" && mkdir -p "$crds"
	cp "$gwapi_dir"/config/crd/experimental/gateway.networking.*.yaml "$crds/"
	touch "$crds/.complete"
	echo "== gateway-api ${gwapi_version} experimental CRDs copied to $crds" >&2
fi

echo "$stamp" >"$cache/.stamp"
if ((built > 0)); then
	echo "== built $built binaries in $((SECONDS - total_start))s into $cache" >&2
fi
echo "$cache"
