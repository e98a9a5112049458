// Package clustertest gives Go tests the local cluster.
//
//	func TestMain(m *testing.M) { os.Exit(clustertest.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		c := clustertest.Start(t)           // brings the cluster up, or reuses a running one
//		ns := c.NewNamespace(t)             // own namespace, deleted at cleanup
//		ns.Client.AppsV1().Deployments(ns.Name).Create(...)
//		resp, err := c.HTTPClient(5*time.Second).Get("http://" + podIP + ":3000/")
//	}
//
// Start fails the test (it never skips) when not run as root or when the cached
// binaries are missing, telling to run `make cluster-binaries`. It builds
// bin/haptic-cluster from the working tree so the node runs the current code.
//
// Reaching the cluster: everything in the cluster lives in a network namespace
// and must be reached from inside it; nothing may be sent to 10.x from the
// root namespace. The test process itself stays in the root namespace: the
// clientset, rest.Config (its Dial field) and HTTPClient open every socket on
// an OS thread that entered the cluster's namespace (package netns), so
// requests to the API server and to pod IPs originate inside it. A test that
// must run a program inside the namespace uses Cluster.Command.
//
// Several test binaries (go test ./... runs packages in parallel) may share the
// cluster: each holds StateDir/users.lock shared while it runs; Up and Down
// serialize on StateDir/up.lock. Main takes the cluster down after the tests
// when a test process brought it up and no other test process still uses it
// (HAPTIC_CLUSTER_KEEP=1 keeps it); a cluster started with `make cluster-up`
// is left running.
package clustertest
