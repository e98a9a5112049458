package agentapi

// The agent's URL paths.
const (
	PathConfig  = "/v1/config"
	PathRuntime = "/v1/runtime"
	PathState   = "/v1/state"
	PathHealthz = "/healthz"
	// PathLivez answers 200 while the agent serves, whether HAProxy runs or not
	// (the agent container's liveness; HAProxy's container restarts on its own).
	PathLivez = "/livez"

	// QueryVerify is GET /v1/state's query parameter; VerifyRuntime its one value.
	QueryVerify   = "verify"
	VerifyRuntime = "runtime"
)

// MaxBodyBytes bounds a request body and the answer of GET /v1/config (file sets
// with many certificates and large maps fit well below it).
const MaxBodyBytes = 256 << 20

// MaxAnswerBytes bounds the other answers (results and state) a client reads.
const MaxAnswerBytes = 1 << 20

// Realm is the basic-auth realm the agent names when it refuses credentials.
const Realm = "haptic-agent"
