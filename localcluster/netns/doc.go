// Package netns enters the local cluster's network namespace from Go.
//
// Everything that talks to the cluster (apiserver at 10.96.0.1, pods at
// 10.244.x.y) must do so from inside the namespace: such traffic must never be
// sent from the root namespace. DialContext opens a socket on an OS thread that
// has entered the namespace; a socket stays bound to the namespace it was created
// in, so the returned connection can be used from any goroutine. The thread that
// entered the namespace is never unlocked, so the Go runtime retires it instead of
// reusing it for unrelated goroutines.
package netns
