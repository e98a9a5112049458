// Package agentapi is the protocol between the controller and haptic-agent: the
// wire types of every request and answer, the URL paths, the limits on bodies, the
// HTTP client and the way both sides read the agent's credentials. The agent
// (internal/agent) serves it; the controller side (internal/deploy, cmd/haptic)
// speaks it through Client and never imports the agent.
//
//	PUT  /v1/config   apply a file set: ConfigRequest → Result
//	GET  /v1/config   the set the agent runs and its HAProxy version: CurrentConfig
//	                  (holds certificate private keys; never print it)
//	POST /v1/runtime  apply runtime operations: RuntimeRequest → Result
//	GET  /v1/state    State; ?verify=runtime first runs a runtime verification
//	GET  /healthz     200 while the HAProxy master runs (no auth)
//
// Every /v1 path needs HTTP basic auth. Request bodies are JSON with unknown fields
// refused, at most MaxBodyBytes; answers are indented JSON. A non-2xx answer reaches
// callers as *StatusError. docs/design/agent-protocol.md describes the protocol for
// people.
//
// The package imports only the standard library and the plain types it carries
// (bundle files, runtime operations and capabilities), so that both sides can use it
// without pulling in Kubernetes or the template engine.
package agentapi
