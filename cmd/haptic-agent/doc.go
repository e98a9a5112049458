// Command haptic-agent runs next to HAProxy in every HAProxy pod: it drives HAProxy in
// master-worker mode and serves the authenticated API the controller deploys through
// (see internal/agent). In a pod it runs twice, in two containers on shared config
// and state volumes (charts/haptic): `haptic-agent launch` is HAProxy's container —
// it waits for the agent's launch file and runs HAProxy, starting a new master
// whenever one exits, and soft-stops it on SIGTERM/SIGINT/SIGUSR1 — and `haptic-agent
// --external-haproxy` the agent's, which adopts that master and reloads it through
// its master socket, so either container restarts without the other. Without
// --external-haproxy the agent runs HAProxy as its child.
//
//	haptic-agent launch [--state-dir /var/lib/haptic-agent] [--haproxy-binary haproxy] [--poll 100ms]
//
// Flags (defaults in brackets):
//
//	--listen [:5555]                      API address
//	--haproxy-binary [haproxy]
//	--config-file [/etc/haproxy/haproxy.cfg], --maps-dir [/etc/haproxy/maps],
//	--ssl-dir [/etc/haproxy/ssl], --general-dir [/etc/haproxy/general]
//	--state-dir [/var/lib/haptic-agent]   manifest, last known good set, agent.cfg, sockets
//	--reload-verification-timeout [60s]   default $HAPTIC_AGENT_RELOAD_VERIFICATION_TIMEOUT;
//	                                      above 60s: exit 2 at startup
//	--credentials-file                    one line "username:password"; else the
//	                                      HAPTIC_AGENT_USERNAME / HAPTIC_AGENT_PASSWORD env;
//	                                      without credentials: exit 2
//	--bootstrap-config                    file HAProxy starts with before the first apply
//	                                      (default: built-in, hard-stop-after 10s + /healthz)
//	--status-address [all], --status-port [8404]  the built-in bootstrap's /healthz
//	--stop-timeout [15s]                  graceful HAProxy stop on SIGTERM before SIGTERM/SIGKILL
//	--verify-interval [1m]                compare every loaded map file and server line on
//	                                      disk with the worker, correct divergence; 0 disables
//	--external-haproxy                    HAProxy runs in a container of its own (haptic-agent
//	                                      launch on the same state dir): adopt it, never start
//	                                      or stop it
//	--log-level [info]
//
// API (HTTP basic auth on /v1):
//
//	PUT  /v1/config   {"hash","files":[{kind,name,content}]} → {"hash","result","reloaded","reloadID","durationMs","error","alerts"}
//	                  200 applied|unchanged, 400 bad request/hash, 401, 422 invalid (HAProxy's alerts),
//	                  502 rolled_back, 500 rollback_failed
//	POST /v1/runtime  {"baseHash"?,"operations":[{"op":...}],"files":[...],"hash"} → same shape
//	                  plus "serverDivergence","mapDivergence" (found by the read-back);
//	                  200 applied|reloaded-after-runtime-failure, 400, 401, 409 stale baseHash, 422
//	GET  /v1/state    {"hash","files","haproxyVersion","capabilities","reloads","failedReloads",
//	                   "lastApply","lastReload","workers","treeHash","serverDivergence",
//	                   "mapDivergence","lastVerify"}; ?verify=runtime verifies maps and servers first
//	GET  /v1/config   {"hash","files","haproxyVersion"}: the set that runs (holds certificate
//	                  keys — authenticated like every /v1 route; haptic plan --from-agent)
//	GET  /healthz     200 while the HAProxy master runs (no auth)
//	GET  /livez       200 while the agent serves (no auth)
//
// When the HAProxy master exits on its own (killed, crashed) it is started again on
// the last known good set — by `haptic-agent launch` with --external-haproxy, else
// by the agent — and State.haproxyRestarts counts it.
// HAProxy outlives an agent that dies: the next agent on the same state dir adopts
// the running master — no restart, no reload — and reads back what it runs (see
// internal/agent, "Adoption").
//
// Exit codes: 0 after SIGTERM/SIGINT/SIGUSR1 (HAProxy stopped, unless
// --external-haproxy), 1 when HAProxy cannot start (or be restarted, or no master
// serves before the agent is stopped), 2 for usage errors. launch: 0 after a stop
// signal (HAProxy stopped), 1 when the launch file cannot be read or HAProxy not
// found, 2 for usage errors.
package main
