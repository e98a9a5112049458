package cluster

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/haproxy-haptic/haptic/localcluster/node"
)

// KubernetesVersion is the version the binaries in the cache are built from; it
// must match k8s.io/kubernetes in localcluster/k8sbin/go.mod (a test checks it).
const KubernetesVersion = "v1.37.2"

// GatewayAPIVersion is the Gateway API release whose experimental CRDs are
// installed; it must match sigs.k8s.io/gateway-api in localcluster/echobin/go.mod
// (a test checks it).
const GatewayAPIVersion = "v1.6.3"

// Fixed addresses inside the cluster namespace.
const (
	APIServerIP         = "10.96.0.1"
	APIServerPort       = 6443
	ServiceCIDR         = "10.97.0.0/16"
	KubernetesClusterIP = "10.97.0.1"
	PodCIDRPrefix       = "10.244."
	NodeName            = "haptic-node"
	DefaultNetns        = "haptic"
	DefaultStateDir     = "/var/lib/haptic-cluster"
)

// Config says where the cluster keeps its state and finds its binaries.
type Config struct {
	Netns    string // network namespace name
	StateDir string // state root
	CacheDir string // directory with etcd, kube-*, kubectl, echo-basic
	BinDir   string // the repository's bin/ (haptic-cluster, haptic, haptic-agent)
}

// DefaultConfig derives the configuration from the environment:
// HAPTIC_CACHE (cache root), HAPTIC_CLUSTER_STATE, HAPTIC_CLUSTER_NETNS, and
// HAPTIC_BIN (the repository's bin/; default: the running executable's directory).
func DefaultConfig() (Config, error) {
	cacheRoot := os.Getenv("HAPTIC_CACHE")
	if cacheRoot == "" {
		cacheRoot = "/var/cache/haptic"
	}
	cfg := Config{
		Netns:    envOr("HAPTIC_CLUSTER_NETNS", DefaultNetns),
		StateDir: envOr("HAPTIC_CLUSTER_STATE", DefaultStateDir),
		CacheDir: filepath.Join(cacheRoot, "k8s-"+KubernetesVersion),
	}
	if bin := os.Getenv("HAPTIC_BIN"); bin != "" {
		cfg.BinDir = bin
		return cfg, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return cfg, fmt.Errorf("find own executable: %w", err)
	}
	cfg.BinDir = filepath.Dir(exe)
	return cfg, nil
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// Paths of the files the cluster keeps.
func (c Config) PKIDir() string  { return filepath.Join(c.StateDir, "pki") }
func (c Config) RunDir() string  { return filepath.Join(c.StateDir, "run") }
func (c Config) LogDir() string  { return filepath.Join(c.StateDir, "logs") }
func (c Config) PodsDir() string { return filepath.Join(c.StateDir, "pods") }

// ImagesDir holds image table files the process node reads at every container
// start (localcluster/README.md, "Image tables").
func (c Config) ImagesDir() string         { return filepath.Join(c.StateDir, "images.d") }
func (c Config) EtcdDir() string           { return filepath.Join(c.StateDir, "etcd") }
func (c Config) Kubeconfig() string        { return filepath.Join(c.StateDir, "admin.kubeconfig") }
func (c Config) Binary(name string) string { return filepath.Join(c.CacheDir, name) }
func (c Config) CRDDir() string {
	return filepath.Join(c.CacheDir, "gateway-api-"+GatewayAPIVersion+"-experimental-crds")
}

// TestsStartedMarker returns the file that marks a cluster brought up by test
// processes (clustertest): the last of them takes it down. `haptic-cluster up`
// removes it, so a person who asked for the cluster keeps it.
func (c Config) TestsStartedMarker() string {
	return filepath.Join(c.RunDir(), "started-by-tests")
}

// APIServerURL is the URL clients inside the namespace use.
func APIServerURL() string {
	return fmt.Sprintf("https://%s:%d", APIServerIP, APIServerPort)
}

// RequiredBinaries lists the cached binaries: the control plane Up starts and
// the workloads the image table maps (make cluster-binaries builds them all).
var RequiredBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", node.EchoBasicBinary, "coredns"}

// CheckBinaries returns an error naming the missing binaries and how to build them.
func (c Config) CheckBinaries() error {
	var missing []string
	for _, name := range RequiredBinaries {
		if _, err := os.Stat(c.Binary(name)); err != nil {
			missing = append(missing, c.Binary(name))
		}
	}
	if _, err := os.Stat(c.CRDDir()); err != nil {
		missing = append(missing, c.CRDDir())
	}
	if len(missing) > 0 {
		return fmt.Errorf("cluster binaries missing (%v): run `make cluster-binaries` (localcluster/build-binaries.sh)", missing)
	}
	return nil
}
