// Package agent is haptic-agent's core: it runs next to HAProxy in every HAProxy pod,
// supervises HAProxy in master-worker mode and applies what the controller sends.
//
// HAProxy runs (started by HAProxy's own container, or by the agent; see Adoption) as `haproxy -W -S <state>/master.sock,mode,600 -p <state>/haproxy.pid
// -f <config-file> -f <state>/agent.cfg`, in its own process group. agent.cfg holds
// only a global section with `stats socket <state>/admin.sock mode 600 level admin
// expose-fd listeners`; HAProxy 2.6 merges global sections across files, so the
// rendered haproxy.cfg keeps its own global section and the agent always has its
// admin socket. `haproxy -c` runs with the same two files.
//
// Without a config file on disk the agent writes a bootstrap config (BootstrapConfig:
// hard-stop-after 10s and a /healthz status frontend). With one (an agent restart) it
// rebuilds the current set and its hash from the files the manifest
// (<state>/current.json) lists, and HAProxy starts on it. If that set does not come
// up, it falls back to the last known good set (<state>/last-known-good.json, mode
// 0600), then to the bootstrap config.
//
// # Adoption
//
// The agent takes over an HAProxy master it did not start (adopt.go) when the pid
// file names a live process whose command line names our master socket, the
// master answers `show proc` with a current worker, and that worker answers `show
// info` on the admin socket: no restart, no reload, HAProxy's reload counter
// continues. Its state is the set on disk, read back at once as the runtime
// verification does (maps and servers; a map entry a killed agent added at runtime
// but never wrote is corrected at runtime, other divergence by a reload), recorded
// as State.LastVerify. It watches the adopted master through /proc (not its child).
//
// In a pod (Options.External, `--external-haproxy`; the chart's layout) HAProxy
// runs in a container of its own and the agent never starts it: it writes
// <state>/launch.json (HAProxy's arguments, after agent.cfg and the config file)
// and `haptic-agent launch`, the HAProxy container's entrypoint, waits for that
// file and runs HAProxy as its child, starting a new master at once whenever one
// exits (no container restart and its back-off). The agent adopts every master
// that container starts: at its own start (a fresh pod, or an agent container
// restart while HAProxy serves) and after a master exited — with /healthz at 503
// meanwhile, it puts the last known good set on disk and adopts the new master
// (State.haproxyRestarts). A set under which no master serves within the reload
// verification timeout is replaced on disk by the last known good set, then the
// bootstrap config, for the container's next start. Stopping the agent leaves
// HAProxy running; HAProxy's container stops on its own signal. The two
// containers share the state volume at the same path and the pod's PID namespace.
//
// Without External (a process, not a pod: tests, a VM) the agent runs HAProxy as
// its child, in its own process group and without a parent-death signal, so an
// agent that dies leaves it serving and the next agent on the same state dir
// adopts it when the manifest existed; a master that cannot be adopted is stopped
// (stopOrphan) and HAProxy started anew; a master that exits is started again by
// the agent (Restart); SIGTERM stops HAProxy gracefully, bounded by the stop
// timeout. In a Kubernetes pod this mode cannot keep HAProxy through an agent
// restart: the container's processes end with it.
//
// Applying a file set (ApplyConfig): the hash must match the files; every map file
// must hold only lines the runtime API can reproduce (config.CheckMapFile: no line
// over config.MaxMapLine bytes, no NUL, no control character but TAB and a final CR
// in an entry line, every entry passing config.CheckMapEntry), else 400 naming the
// file, the line and why, before anything is written; an identical set is a no-op;
// `haproxy -c` must accept it (else 422 with HAProxy's alerts, nothing changed); each
// file is staged next to its target and renamed into place and files
// of the previous set that the new one lacks are removed; then a reload through the
// master CLI (retried while the master refuses connections) is verified within the
// reload verification timeout: the master's reload counter moved, its failed counter
// did not, a new current worker exists and answers `show info` on the admin socket.
// On failure the last known good set is restored and reloaded (502 rolled_back).
//
// Runtime operations (ApplyRuntime) go to the admin socket (see
// internal/haproxy/runtime for the JSON shape), then the given files are written so
// that disk matches what runs. An operation that fails Validate (a map entry
// CheckMapEntry refuses included) or a given map file that fails CheckMapFile is
// refused with 400 before anything is sent or written. A failing operation falls
// back to a verified reload of the resulting set. Everything that changes files or
// HAProxy is serialized by one mutex, so a runtime operation never lands in a worker
// that a reload is replacing.
//
// # Read-back and divergence
//
// After the operations succeed (before the files are written) the agent reads back
// what they touched (readback.go): `show servers state <backend>` for every backend
// an operation touched, and `show map <file>` for every map. Each touched server must
// run if and only if the resulting haproxy.cfg has its server line, with the line's
// address and port (when it is an IP address), maintenance state ("disabled" means
// maint; ready and drain are not maint) and weight (when the line or an operation
// sets it; 1 when unwritten, default-server is not followed); server lines are read
// with the planner's parser (config.Parse, config.ReadServer) from the touched
// backend's section alone, found by its header line (the whole configuration when
// the section is not found so: a parse of 50,000 backends took 0.2 s), and a
// configuration it cannot read fails the read-back (a reload follows). Each touched map must
// hold the entries of the resulting map file, compared as multisets (runtime
// additions are appended, so `show map` order differs from file order; map files
// hold unique keys). Diverging servers and maps are counted in
// agentapi.Result.ServerDivergence / MapDivergence ("deployment/runtime" and "runtime-map"
// divergence) and cumulatively in State; any divergence, or a read-back that fails,
// takes the same path as a failed operation: a verified reload of the resulting set
// (reloaded-after-runtime-failure), so that what runs equals disk again.
//
// Map files are read with runtime.ParseMapFile everywhere (read-back, verification,
// correction): it reads a file exactly as HAProxy 2.6 loads it (comments only with
// '#' in the first byte, blanks around keys and values dropped, CR/NUL ending a
// line, lines of 16,383 bytes or more loaded as two entries), and runtime.DiffMap
// skips entries too long for `show map` to print, so that a file and the worker
// never differ in appearance only.
//
// Runtime verification (verify.go): GET /v1/state?verify=runtime, and every
// --verify-interval (Agent.VerifyLoop), compares every map file of the current set,
// as it is on disk, with the worker's `show map` (only maps the worker loaded from
// that path, per the `show map` listing). A diverging map counts as runtime-map
// divergence and is replaced at runtime with the file's entries (prepare/add/commit
// map, atomic), then read back; if that fails or still differs, the files on disk
// are reloaded. It also compares every server of `show servers state` with its line
// in haproxy.cfg on disk (presence, address, weight the line sets, maintenance); a
// diverging server counts as server divergence and the files are reloaded.
// State.LastVerify reports the last verification.
//
// # Protocol
//
// Handler serves the agent protocol of internal/agentapi, which owns its wire types
// (ConfigRequest, RuntimeRequest, Result, State, CurrentConfig), paths, limits and
// credentials; see docs/design/agent-protocol.md.
package agent
