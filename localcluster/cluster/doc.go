// Package cluster brings the local Kubernetes cluster up and down.
//
// One network namespace (default "haptic") holds the control plane. Its lo
// gets the non-loopback address the API server advertises (10.96.0.1/32). Pods
// get their own namespaces with a 10.244.x.y/32 each, joined to this one by
// veth pairs (set up by the process node; forwarding is enabled here only).
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler and the process
// node (`haptic-cluster node`) run inside it as background processes whose PIDs
// are recorded under StateDir/run. State lives under StateDir
// (/var/lib/haptic-cluster by default):
//
//	pki/               CA, serving, client and service-account keys
//	admin.kubeconfig   system:masters credential, server https://10.96.0.1:6443
//	etcd/              etcd data (wiped when a fresh cluster starts)
//	run/<name>.pid     PIDs of the processes Up started
//	logs/<name>.log    their output
//	pods/<ns>_<pod>/   per-pod volumes and container logs (written by the node)
//
// Up is idempotent: when every recorded process is alive and the API server is
// ready it returns at once. When etcd runs and only the API server (StopAPIServer),
// controller-manager, scheduler or node died, it restarts just those. Otherwise it clears what an earlier, killed run left
// behind (processes inside the namespace, the namespace itself, stale mounts
// under StateDir, pid files) and starts a fresh cluster.
package cluster
