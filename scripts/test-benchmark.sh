#!/usr/bin/env bash
# Render cost by object count with the default libraries (the performance guide's
# table): charts/haptic/libraries/base.yaml + ingress.yaml (or gateway.yaml) +
# deploy/local/30-haptic-overlay.yaml, fixtures from tools/benchfixtures (per step one
# Ingress or HTTPRoute, one Service, two EndpointSlices), timed by `haptic benchmark`.
#
#   scripts/test-benchmark.sh --ingress-only --steps 100,1000,5000 --iterations 3
#   scripts/test-benchmark.sh --httproute-only --steps 100,1000 --iterations 3
#   scripts/test-benchmark.sh --steps 5000 --cpu-profiles DIR   # DIR/<kind>.prof too
#
# Without --*-only both route kinds run. Every timed full render starts from nothing;
# the re-render columns time the render after one object changed (the middle route,
# or the middle EndpointSlice), reusing what the previous render memoized; the first
# re-render right after a render of the fixtures, which waits for the engine to index
# what that render made (in the background), has a column of its own.
set -euo pipefail

cd "$(dirname "$0")/.."
kinds="ingress httproute"
steps="100,1000,5000"
iterations=3
profiles=""
while [ $# -gt 0 ]; do
	case "$1" in
	--ingress-only) kinds="ingress" ;;
	--httproute-only) kinds="httproute" ;;
	--steps) steps="$2"; shift ;;
	--steps=*) steps="${1#--steps=}" ;;
	--iterations) iterations="$2"; shift ;;
	--iterations=*) iterations="${1#--iterations=}" ;;
	--cpu-profiles) profiles="$2"; shift ;;
	-h|--help) sed -n '2,15p' "$0"; exit 0 ;;
	*) echo "test-benchmark.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/haptic" ./cmd/haptic

for kind in $kinds; do
	lib=ingress; label=Ingresses; route=ingresses
	if [ "$kind" = httproute ]; then lib=gateway; label=HTTPRoutes; route=http-routes; fi
	go run ./tools/benchfixtures -kind "$kind" -steps "$steps" >"$work/fixtures.yaml"
	tests=()
	for n in ${steps//,/ }; do tests+=(--test "benchmark-$kind-$n"); done
	if [ -n "$profiles" ]; then tests+=(--cpu-profile "$profiles/$kind.prof"); fi
	"$work/haptic" benchmark -f charts/haptic/libraries/base.yaml -f "charts/haptic/libraries/$lib.yaml" \
		-f deploy/local/30-haptic-overlay.yaml -f "$work/fixtures.yaml" \
		"${tests[@]}" --iterations "$iterations" --rerender >"$work/out.txt"
	echo "== $label (default libraries, median of $iterations; $(nproc) CPUs) =="
	# One row per step: total, per route, the shared index (the libraries' values
	# computed once for all files), haproxy.cfg and every map (each its own work), the
	# largest file's share of the total, and the re-render medians after one route
	# and after one EndpointSlice changed.
	awk -v label="$label" -v route="$route" '
		function ms(s) {
			if (s ~ /µs$/) { sub(/µs$/, "", s); return s / 1000 }
			if (s ~ /ms$/) { sub(/ms$/, "", s); return s + 0 }
			if (s ~ /s$/) { sub(/s$/, "", s); return s * 1000 }
			return s
		}
		function field(line, key,   i, f) { n = split(line, f, " "); for (i = 1; i < n; i++) if (f[i] == key) return ms(f[i+1]); return 0 }
		function median(line) { return field(line, "median") }
		/^test / { name = $2; sub(/.*-/, "", name); rows[++nrows] = name; next }
		/^  total / { total[name] = median($0); next }
		/^  haproxy.cfg / { cfg[name] = median($0); if (cfg[name] > big[name]) big[name] = cfg[name]; next }
		/^  shared:/ { shared[name] += median($0); next }
		/^  map:/ { if (median($0) > big[name]) big[name] = median($0); m = $1; sub(/^map:/, "", m); if (!(m in seenmap)) { seenmap[m] = 1; maps[++nmaps] = m }; val[name, m] = median($0); next }
		/^  rerender / {
			if ($2 == route) { rr[name] = median($0); rr1[name] = field($0, "first") }
			if ($2 == "endpoints") { re[name] = median($0); re1[name] = field($0, "first") }
			next
		}
		END {
			printf "| %s | Total render | Per route | Shared index | haproxy.cfg |", label
			for (i = 1; i <= nmaps; i++) printf " %s |", maps[i]
			printf " Largest file / total | Re-render (1 route) | Re-render (1 EndpointSlice) | First re-render (route / EndpointSlice) |\n|---|---|---|---|---|"
			for (i = 1; i <= nmaps; i++) printf "---|"
			printf "---|---|---|---|\n"
			for (r = 1; r <= nrows; r++) {
				n = rows[r]
				printf "| %d | %.1f ms | %.3f ms | %.1f ms | %.1f ms |", n, total[n], total[n] / n, shared[n], cfg[n]
				for (i = 1; i <= nmaps; i++) printf " %.2f ms |", val[n, maps[i]]
				printf " %.0f%% | %.1f ms | %.1f ms | %.1f / %.1f ms |\n", 100 * big[n] / total[n], rr[n], re[n], rr1[n], re1[n]
			}
		}' "$work/out.txt"
	echo
done
