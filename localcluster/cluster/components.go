package cluster

import (
	"fmt"
	"path/filepath"
)

// component is one control-plane process Up starts, in order.
type component struct {
	name string
	argv func(cfg Config) []string
}

// components lists the processes in start order; Down stops them in reverse.
// "node" is this binary's own process node.
var components = []component{
	{name: "etcd", argv: etcdArgs},
	{name: "kube-apiserver", argv: apiserverArgs},
	{name: "kube-controller-manager", argv: controllerManagerArgs},
	{name: "kube-scheduler", argv: schedulerArgs},
	{name: "node", argv: nodeArgs},
}

func etcdArgs(cfg Config) []string {
	return []string{
		cfg.Binary("etcd"),
		"--name=haptic",
		"--data-dir=" + cfg.EtcdDir(),
		"--listen-client-urls=http://127.0.0.1:2379",
		"--advertise-client-urls=http://127.0.0.1:2379",
		"--listen-peer-urls=http://127.0.0.1:2380",
		"--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=haptic=http://127.0.0.1:2380",
		"--listen-metrics-urls=http://127.0.0.1:2381",
		// A throwaway test cluster: durability is not worth the fsync latency.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
}

func apiserverArgs(cfg Config) []string {
	pki := cfg.PKIDir()
	p := func(name string) string { return filepath.Join(pki, name) }
	return []string{
		cfg.Binary("kube-apiserver"),
		"--etcd-servers=http://127.0.0.1:2379",
		"--advertise-address=" + APIServerIP,
		"--bind-address=0.0.0.0", // inside the namespace only
		fmt.Sprintf("--secure-port=%d", APIServerPort),
		"--tls-cert-file=" + p("apiserver.crt"),
		"--tls-private-key-file=" + p("apiserver.key"),
		"--client-ca-file=" + p("ca.crt"),
		"--service-account-key-file=" + p("sa.pub"),
		"--service-account-signing-key-file=" + p("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
		// No kube-proxy: webhooks and aggregated APIs are called at endpoint IPs.
		"--enable-aggregator-routing=true",
		// The advertised address is not a real endpoint of the kubernetes Service.
		"--endpoint-reconciler-type=none",
		"--proxy-client-cert-file=" + p("front-proxy-client.crt"),
		"--proxy-client-key-file=" + p("front-proxy-client.key"),
		"--requestheader-client-ca-file=" + p("ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		// The node's hostname does not resolve: reach its log endpoint (kubectl logs) by IP.
		"--kubelet-preferred-address-types=InternalIP",
		"--profiling=false",
	}
}

func controllerManagerArgs(cfg Config) []string {
	pki := cfg.PKIDir()
	kc := cfg.Kubeconfig()
	return []string{
		cfg.Binary("kube-controller-manager"),
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--controllers=*",
		"--leader-elect=false",
		"--service-account-private-key-file=" + filepath.Join(pki, "sa.key"),
		"--root-ca-file=" + filepath.Join(pki, "ca.crt"),
		"--cluster-signing-cert-file=" + filepath.Join(pki, "ca.crt"),
		"--cluster-signing-key-file=" + filepath.Join(pki, "ca.key"),
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--use-service-account-credentials=false",
		"--profiling=false",
	}
}

func schedulerArgs(cfg Config) []string {
	kc := cfg.Kubeconfig()
	return []string{
		cfg.Binary("kube-scheduler"),
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--leader-elect=false",
		"--profiling=false",
	}
}

func nodeArgs(cfg Config) []string {
	return []string{
		filepath.Join(cfg.BinDir, "haptic-cluster"), "node",
		"--kubeconfig=" + cfg.Kubeconfig(),
		"--pods-dir=" + cfg.PodsDir(),
		"--cache-dir=" + cfg.CacheDir,
		"--bin-dir=" + cfg.BinDir,
		"--netns=" + cfg.Netns,
	}
}
