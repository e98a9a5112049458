# Local cluster targets (issue 3). Included by the root Makefile, which defines
# GO ?= go and BIN := $(CURDIR)/bin. Everything here runs as root (network
# namespaces, mounts). See localcluster/README.md.

HAPTIC_CACHE ?= /var/cache/haptic
export HAPTIC_CACHE
CLUSTER_TOOL := $(BIN)/haptic-cluster

.PHONY: cluster-binaries cluster-tool cluster-up cluster-down cluster-status test-cluster

## cluster-binaries: build etcd, kube-*, kubectl, echo-basic and coredns into $(HAPTIC_CACHE) (cached; ~30 min cold)
cluster-binaries:
	GO=$(GO) $(CURDIR)/localcluster/build-binaries.sh

## cluster-tool: build bin/haptic-cluster
cluster-tool:
	$(GO) build -o $(CLUSTER_TOOL) ./localcluster/cmd/haptic-cluster

## cluster-up: start (or reuse) the local cluster
cluster-up: cluster-binaries cluster-tool
	$(CLUSTER_TOOL) up

## cluster-down: stop every cluster process and remove its network namespace
cluster-down: cluster-tool
	$(CLUSTER_TOOL) down

## cluster-status: what runs
cluster-status: cluster-tool
	$(CLUSTER_TOOL) status

## test-cluster: unit tests of the local cluster and its end-to-end test (brings the cluster up)
test-cluster: cluster-binaries cluster-tool
	$(GO) test -count=1 -timeout 10m ./localcluster/...
