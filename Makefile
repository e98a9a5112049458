# HAPTIC — build, test and run. `make run` and `make test` set up everything they need.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/haproxy-haptic/haptic/internal/version.Version=$(VERSION) \
           -X github.com/haproxy-haptic/haptic/internal/version.Commit=$(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
export GOFLAGS := -buildvcs=false

.PHONY: all deps haproxy build test test-resilience test-unit lint generate run bench-render clean bench-runtime bench-reloadfree bench-e2e bench-webhook

all: build

## deps: system packages and Go modules the build and tests need
deps: haproxy
	@command -v curl >/dev/null 2>&1 || { export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq curl >/dev/null; }
	$(GO) mod download

## haproxy: install Debian's HAProxy when it is missing
haproxy:
	@command -v haproxy >/dev/null 2>&1 || { \
	  echo ">> installing haproxy (apt-get)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq haproxy >/dev/null; \
	  command -v haproxy >/dev/null; }

## build: bin/haptic, bin/haptic-agent, bin/haptic-cluster
build:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/haptic ./cmd/haptic
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/haptic-agent ./cmd/haptic-agent
	$(GO) build -trimpath -o $(BIN)/haptic-cluster ./localcluster/cmd/haptic-cluster

## test: the whole suite (race detector on; the local cluster for end-to-end tests)
test: deps build cluster-binaries
	$(GO) test -race -count=1 -timeout 20m -skip '^(TestInjectionProof|TestIncrementalEqualsFull)$$' $$($(GO) list ./... | grep -v -e /localcluster -e /test/)
	@# Thousands of hostile renders and haproxy -c runs: without the race detector.
	$(GO) test -count=1 -timeout 20m -run '^TestInjectionProof$$' -v ./internal/libraries/ | grep -E '^(=== RUN|--- |\s+injection_test|PASS|FAIL|ok)'; exit $${PIPESTATUS[0]}
	@# Incremental renders equal full renders after 1,000 random change sequences per library.
	$(GO) test -count=1 -timeout 45m -run '^TestIncrementalEqualsFull$$' -v ./internal/pipeline/ | grep -E '^(=== RUN|--- |\s+incremental_test|PASS|FAIL|ok)'; exit $${PIPESTATUS[0]}
	@# The config parser's fuzz targets, briefly: they must never panic.
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 200000x ./internal/haproxy/config/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 200000x ./internal/fieldpath/
	@# Packages that share the local cluster run one at a time: one may restart the node.
	$(GO) test -race -count=1 -p 1 -timeout 25m -skip '^(TestScale|TestScaleIngress)$$' ./localcluster/... $$($(GO) list ./test/... | grep -v /test/resilience)
	@# The scale tests' latency budgets hold for the product, not for the race detector's 5-10x slowdown.
	$(GO) test -count=1 -timeout 15m -run '^(TestScale|TestScaleIngress)$$' -v ./test/e2e/ 2>&1 | grep -E '^(=== RUN|--- |\s+scale_(ingress_)?test|\s{8}|PASS|FAIL|ok)'; exit $${PIPESTATUS[0]}
	@# The fault suite's short form: the HAProxy master killed (its container restarts, the agent adopts the new master), the agent's container restarted (adopts the running HAProxy); all of it: make test-resilience.
	$(GO) test -race -count=1 -timeout 10m -run '^(TestHAProxyMasterKilled|TestAgentRestarted)$$' -v ./test/resilience/
	$(BIN)/haptic validate -f examples/ingress/haptic-config.yaml

## lint: formatting and vet
lint:
	@fmt_out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$fmt_out" ]; then echo "gofmt needed:"; echo "$$fmt_out"; exit 1; fi
	$(GO) vet ./...

## generate: CRD YAML, deepcopy and bundled schemas
generate:
	$(GO) tool controller-gen object paths=./api/... crd:crdVersions=v1 output:crd:dir=charts/haptic/crds
	rm -f charts/haptic-crds/templates/*.yaml && cp charts/haptic/crds/*.yaml charts/haptic-crds/templates/
	$(GO) run ./tools/crdref > docs/crd-reference.md
	$(GO) generate ./internal/schema/...

## run: the local cluster with HAProxy, the agent, the controller and a sample app (Ctrl-C stops it)
run: deps build cluster-binaries
	$(BIN)/haptic validate -f examples/ingress/haptic-config.yaml
	$(CURDIR)/scripts/run-local.sh

## test-upgrade: upgrade from the previous release on Gateway API v1.4.1 CRDs (PREVIOUS_COMMIT, built into out/upgrade)
## to v1.6.3 CRDs and this tree's controller while every route is asked: all answers 200 (docs/upgrades.md)
PREVIOUS_COMMIT ?= d69d56d
.PHONY: test-upgrade
test-upgrade: haproxy cluster-binaries cluster-tool
	@prev=$$(GO=$(GO) scripts/build-previous.sh $(PREVIOUS_COMMIT) $(CURDIR)/out/upgrade) && \
	HAPTIC_PREVIOUS_DIR=$$prev $(GO) test -tags upgrade -count=1 -timeout 20m -run '^TestUpgradeFromPrevious$$' -v ./test/e2e/ 2>&1 \
	  | grep -E '^(=== RUN|--- |\s+upgrade_test|\s+env_test|PASS|FAIL|ok)'; exit $${PIPESTATUS[0]}

## bench-render: render cost of the default libraries at 100, 1,000 and 5,000 Ingresses and HTTPRoutes (docs/rendering.md)
bench-render:
	$(CURDIR)/scripts/test-benchmark.sh --steps 100,1000,5000 --iterations 21

## pgo-profile: regenerate cmd/haptic/default.pgo (profile-guided optimization of the controller) from render benchmarks
.PHONY: pgo-profile
pgo-profile:
	$(CURDIR)/scripts/pgo-profile.sh

## bench-status: 1,000 HTTPRoutes on one Gateway in the local cluster: status writes per route, time until all are Accepted
.PHONY: bench-status
bench-status: haproxy cluster-binaries cluster-tool
	$(GO) test -count=1 -timeout 10m -run '^(TestStatusCluster|TestStatusBench1000)$$' -v ./test/status/ 2>&1 \
	  | grep -E '^(bench-status|=== RUN|--- |PASS|FAIL|ok|\s+cluster_test)'; exit $${PIPESTATUS[0]}

## images: the controller and HAProxy images (needs Docker; versions from images/versions.env)
.PHONY: images
images:
	set -a && . images/versions.env && set +a && \
	docker build -f images/haptic/Dockerfile --build-arg GO_IMAGE --build-arg HAPROXY_IMAGE --build-arg BASE_IMAGE \
	  --build-arg VERSION=$(VERSION) -t ghcr.io/haproxy-haptic/haptic:$(VERSION) . && \
	docker build -f images/haproxy/Dockerfile --build-arg GO_IMAGE --build-arg HAPROXY_IMAGE \
	  --build-arg VERSION=$(VERSION) -t ghcr.io/haproxy-haptic/haproxy:$(VERSION) .

## bench-gateway-api: the gateway-api-bench probe, routechange and scale scenarios against HAPTIC on the local
## cluster (docs/benchmarks.md); BENCH_SCENARIOS=probe-ingress adds the probe with Ingresses through the default
## fleet (not in the default set). Knobs: BENCH_SCENARIOS, BENCH_OUTPUT_DIR, BENCH_GATEWAYS, BENCH_PROBE_ROUTES,
## BENCH_ROUTECHANGE_ITERATIONS, BENCH_ROUTECHANGE_GRACE_PERIOD, BENCH_SCALE_*, BENCH_DEPLOY_INTERVAL,
## BENCH_WATCH_DEBOUNCE, BENCH_KEEP_CLUSTER. Exit code: runner-summary.json's harness.final_exit_code.
.PHONY: bench-gateway-api bench-gateway-api-smoke
BENCH_TIMEOUT ?= 9h
bench-gateway-api: haproxy build cluster-binaries cluster-tool
	$(GO) test -tags benchgw -count=1 -timeout $(BENCH_TIMEOUT) -run '^TestGatewayAPIBench$$' -v ./test/bench/ 2>&1 \
	  | grep --line-buffered -vE '^\s*$$'; exit $${PIPESTATUS[0]}

## bench-gateway-api-smoke: the smoke size (300 probe routes, scale 10 × 50 for 1 minute); under 15 minutes here
bench-gateway-api-smoke:
	BENCH_PROBE_ROUTES=$${BENCH_PROBE_ROUTES:-300} BENCH_SCALE_NAMESPACES=$${BENCH_SCALE_NAMESPACES:-10} \
	BENCH_SCALE_ROUTES_PER_NAMESPACE=$${BENCH_SCALE_ROUTES_PER_NAMESPACE:-50} BENCH_SCALE_DURATION=$${BENCH_SCALE_DURATION:-1m} \
	  $(MAKE) bench-gateway-api

## test-scale: TestScale and TestScaleIngress at full size (5,000 HTTPRoutes, 5,000 Ingresses; make test runs 200), with their budget tables
## test-churn: TestGatewayChurn for 10 minutes (make test runs 30 s)
.PHONY: test-scale test-churn
# Each test in a process (and local cluster) of its own: in one, the second test's
# controller, watching every namespace, found the first test's 10,000 objects still
# being deleted with its namespace, about 70 MiB of its heap at 5,000 routes.
# Both run when the first misses a budget; the target fails when either did.
test-scale: haproxy build cluster-binaries
	status=0; for t in TestScaleIngress TestScale; do \
	  HAPTIC_SCALE_ROUTES=$${HAPTIC_SCALE_ROUTES:-5000} $(GO) test -count=1 -timeout 60m -run "^$$t\$$" -v ./test/e2e/ 2>&1 \
	    | grep -vE '^\s*$$'; [ $${PIPESTATUS[0]} -eq 0 ] || status=1; \
	done; exit $$status
test-churn: haproxy build cluster-binaries
	HAPTIC_CHURN_DURATION=$${HAPTIC_CHURN_DURATION:-10m} $(GO) test -count=1 -timeout 60m -run '^TestGatewayChurn$$' -v ./test/e2e/ 2>&1 \
	  | grep -vE '^\s*$$'; exit $${PIPESTATUS[0]}

clean:
	rm -rf $(BIN) $(CURDIR)/out

-include localcluster/cluster.mk

## bench-runtime: runtime operations per second on real HAProxy (map entries, servers)
bench-runtime: deps
	$(GO) test -run '^$$' -bench Runtime -benchtime 2s -timeout 10m ./internal/haproxy/runtime/

## test-resilience: the fault suite (#15) with the issue's windows; prints a table
## (case, requests, failed, convergence, reloads). `make test` runs its short form.
test-resilience: deps build cluster-binaries
	HAPTIC_RESILIENCE=full $(GO) test -count=1 -p 1 -timeout 20m -v ./test/resilience/

## bench-reloadfree: new route → first 200 on 1,000- and 5,000-route configs (default libraries), with reload count
bench-reloadfree: haproxy build cluster-binaries
	$(GO) test -run '^$$' -bench RouteAtScale -benchtime 10x -timeout 40m ./test/e2e/

## bench-webhook: admission round trip of an Ingress create with 1,000 and 5,000 Ingresses (one at a time, 8 at once)
bench-webhook: haproxy build cluster-binaries
	$(GO) test -run '^$$' -bench Admission -benchtime 1x -timeout 30m ./test/e2e/

## bench-e2e: time from creating an Ingress to its first 200 through HAProxy (20 samples)
bench-e2e: haproxy build cluster-binaries
	$(GO) test -run '^$$' -bench IngressApplyToFirst200 -benchtime 20x -timeout 20m ./test/e2e/

## conformance: the upstream Gateway API v1.6.3 conformance suite (GATEWAY-HTTP, GATEWAY-GRPC and GATEWAY-TLS profiles)
## against HAPTIC on the local cluster; a full run writes docs/conformance/haptic-gateway-{http,grpc,tls}-report.yaml (see docs/conformance/README.md).
## One test: make conformance CONFORMANCE_ARGS=-run-test=HTTPRouteSimpleSameNamespace
.PHONY: conformance
CONFORMANCE_ARGS ?=
conformance: haproxy cluster-binaries cluster-tool
	@mkdir -p $(CURDIR)/out/conformance
	cd test/conformance && $(GO) test -mod=mod -tags conformance -count=1 -timeout 60m -v -ldflags '$(LDFLAGS)' \
	  -run '^TestGatewayHTTPConformance$$' . -args $(CONFORMANCE_ARGS) 2>&1 | tee $(CURDIR)/out/conformance/test.log; \
	  exit $${PIPESTATUS[0]}
