// Command haptic-cluster runs the project's local Kubernetes cluster: real etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler plus a process
// node, all inside one network namespace. See localcluster/README.md.
//
//	haptic-cluster up                       start (or reuse) the cluster
//	haptic-cluster down [--force]           stop everything, remove the namespace
//	                                        (refused while tests use it, unless --force)
//	haptic-cluster status                   what runs, and the pods
//	haptic-cluster kubectl ARGS...          kubectl with the admin kubeconfig, inside the namespace
//	haptic-cluster exec CMD [ARGS...]       any command inside the namespace
//	haptic-cluster forward LOCALPORT IP:PORT
//	                                        forward 127.0.0.1:LOCALPORT into the namespace
//	haptic-cluster pod-exec NAMESPACE/POD[/CONTAINER] CMD [ARGS...]
//	                                        run a command in a container's mount and network
//	                                        namespaces (what kubectl exec would do)
//	haptic-cluster logs NAMESPACE/POD [CONTAINER]
//	                                        container logs written by the node
//
// Internal: `node` (the process node, started by up) and `container-init SPEC`
// (a container's mount-namespace setup, started by the node).
package main
