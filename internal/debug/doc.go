// Package debug serves the controller's diagnostic endpoints on a loopback-only HTTP
// server: /debug/pprof/ (the net/http/pprof handlers, on the server's own mux),
// /debug/heapdump (a full runtime heap dump, for finding what retains memory) and
// /healthz.
//
// Listen refuses any address whose host is not loopback (127.0.0.0/8 or ::1), so the
// endpoints are reachable only through kubectl port-forward or from inside the pod.
//
// A heap dump stops the world while it is written and is roughly heap-sized, so the
// handler serialises requests (a second concurrent request gets 409 Conflict), checks
// free space in the dump directory ($HAPTIC_HEAPDUMP_DIR, else os.TempDir()) against an
// estimate before writing (507 Insufficient Storage when short), and checks the written
// file against a size floor afterwards, since the runtime ignores write errors while
// dumping (a short file is also 507). The dump goes to a temporary file because
// runtime/debug.WriteHeapDump cannot write to a pipe read by the same process; the file
// is unlinked as soon as it is created and streamed from its open descriptor.
package debug
