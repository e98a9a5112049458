// Package node is the local cluster's process node: a small stand-in for the
// kubelet that runs pods as local processes.
//
// It registers a Ready Node (capacity, addresses, a Lease heartbeat), watches
// the pods bound to it, and runs each pod's containers as processes inside the
// cluster's network namespace (the node itself runs there):
//
//   - every pod gets its own IP (10.244.x.y/32) in its own network namespace,
//     joined to the cluster's by a veth pair (podnet.go), reported as
//     status.podIP/podIPs; hostNetwork pods use the node address;
//   - an image maps to a local command by its name without registry and tag
//     (see images.go); an unmapped image leaves the container Waiting with
//     reason ImageNotMapped, a mapped but unbuilt binary with BinaryNotBuilt;
//   - command/args with $(VAR) expansion, env (value, fieldRef, configMapKeyRef,
//     secretKeyRef, resourceFieldRef, envFrom), working directory;
//   - ConfigMap, Secret, emptyDir, downwardAPI and projected (service-account
//     token, kube-root-ca.crt) volumes appear at their mountPath in a mount
//     namespace per container: the node re-executes its own binary as
//     `haptic-cluster container-init SPEC` with CLONE_NEWNS (private
//     propagation), which mounts and then execs the command. A mountPath whose
//     parents do not exist is made by mirroring the nearest existing ancestor
//     into a tmpfs inside that mount namespace only, so nothing is left on the
//     host's filesystem;
//   - readiness, liveness and startup probes (httpGet to the pod IP,
//     tcpSocket, exec via nsenter into the container's mount namespace);
//   - restartPolicy with restart counts and exponential back-off
//     (CrashLoopBackOff), graceful termination (SIGTERM to the process group,
//     grace period, SIGKILL; then the pod's leftover processes, found by
//     HAPTIC_POD_UID), and deletion of the pod object once its processes have
//     exited. When a container's main process exits, every other process of
//     that container (HAPTIC_POD_UID and HAPTIC_CONTAINER) is SIGKILLed before
//     it is restarted, as its cgroup would be; the pod's other containers run
//     on. Processes share the host's PID namespace, as with
//     shareProcessNamespace: true;
//   - ConfigMap/Secret/downwardAPI/projected contents re-synced every 5 s;
//   - container logs at <pods-dir>/<namespace>_<pod>/<container>.log, also
//     served as the kubelet's /containerLogs endpoint (kubectl logs);
//   - pod events (Started, Killing, BackOff, Unhealthy, Failed).
//
// Every container process carries HAPTIC_POD=<namespace>/<name>,
// HAPTIC_POD_UID, HAPTIC_CONTAINER and HAPTIC_CLUSTER in its environment, so
// tests can find it in /proc and a restarted node can end processes an earlier
// node left behind.
package node
