#!/usr/bin/env bash
# build-binaries.sh builds the local cluster's binaries and caches them outside
# the repository, keyed by the Kubernetes version, reusing a warm cache as is:
#   from localcluster/k8sbin:     etcd, kube-apiserver, kube-controller-manager,
#                                 kube-scheduler, kubectl
#   from localcluster/echobin:    echo-basic (Gateway API conformance echo server)
#   from localcluster/corednsbin: coredns
# It also copies the Gateway API experimental CRDs (and the safe-upgrades
# ValidatingAdmissionPolicy) of echobin's Gateway API release from the module cache.
#
#   HAPTIC_CACHE   cache root (default /var/cache/haptic)
#   GO             go command (default go)
#   GOFLAGS        -p=2 is added unless set: the machines have 2 cores shared with others
#
# Prints the cache directory as the last line of stdout; progress goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GO="${GO:-go}"
k8s_version="$(awk '$1=="k8s.io/kubernetes"{print $2; exit}' "$here/k8sbin/go.mod")"
cache="${HAPTIC_CACHE:-/var/cache/haptic}/k8s-${k8s_version}"
if [[ "${GOFLAGS:-}" != *-p=* ]]; then
	export GOFLAGS="${GOFLAGS:+$GOFLAGS }-p=2"
fi
export CGO_ENABLED=0

# A module's stamp ties its binaries to its exact module graph: a version bump
# in go.mod/go.sum rebuilds the binaries of that module only.
module_stamp() {
	cat "$here/$1/go.mod" "$here/$1/go.sum" | sha256sum | cut -c1-16
}

# echo-basic is named after its Gateway API release (node.EchoBasicBinary): the
# cache is shared with checkouts pinned to other releases.
gwapi_version="$(cd "$here/echobin" && "$GO" list -m -f '{{.Version}}' sigs.k8s.io/gateway-api)"

# name module package
binaries=(
	"etcd k8sbin ./cmd/etcd"
	"kube-apiserver k8sbin ./cmd/kube-apiserver"
	"kube-controller-manager k8sbin ./cmd/kube-controller-manager"
	"kube-scheduler k8sbin ./cmd/kube-scheduler"
	"kubectl k8sbin ./cmd/kubectl"
	"echo-basic-${gwapi_version} echobin sigs.k8s.io/gateway-api/conformance/echo-basic"
	"coredns corednsbin github.com/coredns/coredns"
)

# wait_with_timeout PID SECONDS: true once PID has exited, false after SECONDS.
wait_with_timeout() {
	local i
	for ((i = 0; i < $2 * 2; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.5
	done
	! kill -0 "$1" 2>/dev/null
}

mkdir -p "$cache"
# One build at a time per cache (two make targets started together would race
# on the same .tmp files): the second waits, then finds the binaries cached.
exec 9>"$cache/.lock"
flock 9
# Caches written before per-module stamps had empty markers and one .stamp for k8sbin.
legacy_stamp="$(cat "$cache/.stamp" 2>/dev/null || true)"

total_start=$SECONDS
built=0
for entry in "${binaries[@]}"; do
	read -r name module pkg <<<"$entry"
	stamp="$(module_stamp "$module")"
	marker="$cache/.built-$name"
	if [[ -x "$cache/$name" && -e "$marker" ]]; then
		recorded="$(cat "$marker")"
		if [[ "$recorded" == "$stamp" || (-z "$recorded" && "$legacy_stamp" == "$stamp") ]]; then
			echo "== $name: cached" >&2
			continue
		fi
	fi
	echo "== $name: building $pkg from localcluster/$module (cold builds take minutes)" >&2
	start=$SECONDS
	(cd "$here/$module" && "$GO" build -trimpath -ldflags='-s -w' -o "$cache/$name.tmp" "$pkg") &
	build_pid=$!
	# A heartbeat, so a long cold build never looks hung.
	while ! wait_with_timeout "$build_pid" 60; do
		echo "== $name: still building ($((SECONDS - start))s)" >&2
	done
	wait "$build_pid"
	mv -f "$cache/$name.tmp" "$cache/$name"
	echo "$stamp" >"$marker"
	echo "== $name: done in $((SECONDS - start))s" >&2
	built=$((built + 1))
done

# The Gateway API experimental CRDs come from the same release that provides
# echo-basic (and the Go types): copied from the module cache, never by hand.
crds="$cache/gateway-api-${gwapi_version}-experimental-crds"
if [[ ! -e "$crds/.complete" ]]; then
	gwapi_dir="$(cd "$here/echobin" && "$GO" mod download -json sigs.k8s.io/gateway-api | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	rm -rf "$crds" && mkdir -p "$crds"
	cp "$gwapi_dir"/config/crd/experimental/gateway.networking.*.yaml "$crds/"
	touch "$crds/.complete"
	echo "== gateway-api ${gwapi_version} experimental CRDs copied to $crds" >&2
fi

if ((built > 0)); then
	echo "== built $built binaries in $((SECONDS - total_start))s into $cache" >&2
fi
echo "$cache"
