#!/usr/bin/env bash
# Regenerates cmd/haptic/default.pgo, the profile `go build` optimizes the controller
# with (profile-guided optimization): CPU profiles of `haptic benchmark` rendering the
# default libraries (full renders and re-renders) at 5,000 Ingresses and 5,000
# HTTPRoutes, merged. Run it after changes to the render path or the libraries.
set -euo pipefail

cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -pgo=off -o "$work/haptic" ./cmd/haptic
for kind in ingress httproute; do
	lib=ingress
	if [ "$kind" = httproute ]; then lib=gateway; fi
	go run ./tools/benchfixtures -kind "$kind" -steps 5000 >"$work/fixtures.yaml"
	"$work/haptic" benchmark -f charts/haptic/libraries/base.yaml -f "charts/haptic/libraries/$lib.yaml" \
		-f deploy/local/30-haptic-overlay.yaml -f "$work/fixtures.yaml" --test "benchmark-$kind-5000" \
		--iterations 5 --rerender --cpu-profile "$work/$kind.prof" >/dev/null
done
go tool pprof -proto "$work/ingress.prof" "$work/httproute.prof" >cmd/haptic/default.pgo
echo "wrote cmd/haptic/default.pgo ($(wc -c <cmd/haptic/default.pgo) bytes)"
