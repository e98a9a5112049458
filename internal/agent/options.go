package agent

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// MaxReloadVerificationTimeout is the agent's ceiling for reload verification; a
// larger value is a startup error.
const MaxReloadVerificationTimeout = agentapi.MaxReloadVerificationTimeout

// ErrUsage marks option errors (the command exits with code 2 on them).
var ErrUsage = errors.New("invalid agent options")

// Options configure an Agent.
type Options struct {
	// Binary is the HAProxy binary ("haproxy" on PATH by default).
	Binary string
	// Layout is where the file set lives on disk.
	Layout bundle.Layout
	// StateDir holds the manifest, the last known good set, agent.cfg and the sockets.
	StateDir string
	// ReloadVerificationTimeout bounds the wait for a reload to be confirmed
	// (default and maximum 60 s).
	ReloadVerificationTimeout time.Duration
	// Username and Password protect the API (HTTP basic auth). Both are required.
	Username, Password string
	// BootstrapConfig is the configuration HAProxy starts with when no config file
	// exists yet; empty means the built-in one (see BootstrapConfig).
	BootstrapConfig string
	// StatusAddress and StatusPort are where the built-in bootstrap config answers
	// /healthz (default all addresses, port 8404).
	StatusAddress string
	StatusPort    int
	// StopTimeout bounds the graceful HAProxy stop on shutdown before SIGTERM/SIGKILL
	// (default 15 s).
	StopTimeout time.Duration
	// Logger receives the agent's logs (never a credential); default discards.
	Logger *slog.Logger
	// HAProxyOutput receives HAProxy's stdout/stderr (default: discarded).
	HAProxyOutput io.Writer
	// External: HAProxy runs in a container of its own, started by `haptic-agent
	// launch` from the launch file the agent writes (launch.go). The agent never
	// starts, restarts or stops it: it adopts every master that container starts
	// and reloads it through the master socket. A master that exits is started
	// again by the launcher (and, should the launcher die, by the container's
	// restartPolicy). Without External the agent runs HAProxy as its child (a
	// process, not a pod).
	External bool
}

func (o *Options) defaults() {
	if o.Binary == "" {
		o.Binary = "haproxy"
	}
	if o.ReloadVerificationTimeout == 0 {
		o.ReloadVerificationTimeout = MaxReloadVerificationTimeout
	}
	if o.StatusPort == 0 {
		o.StatusPort = 8404
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 15 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.HAProxyOutput == nil {
		o.HAProxyOutput = io.Discard
	}
}

// Validate checks the options; errors match ErrUsage.
func (o *Options) Validate() error {
	o.defaults()
	switch {
	case o.ReloadVerificationTimeout < 0 || o.ReloadVerificationTimeout > MaxReloadVerificationTimeout:
		return fmt.Errorf("%w: reload verification timeout %s is above the agent's ceiling of %s",
			ErrUsage, o.ReloadVerificationTimeout, MaxReloadVerificationTimeout)
	case o.Username == "" || o.Password == "":
		return fmt.Errorf("%w: credentials are required (username and password)", ErrUsage)
	case o.StateDir == "":
		return fmt.Errorf("%w: state dir is required", ErrUsage)
	case o.Layout.ConfigFile == "" || o.Layout.MapsDir == "" || o.Layout.SSLCertsDir == "" || o.Layout.GeneralStorageDir == "":
		return fmt.Errorf("%w: layout needs a config file and maps, ssl and general dirs", ErrUsage)
	case o.StatusPort < 1 || o.StatusPort > 65535:
		return fmt.Errorf("%w: status port %d out of range", ErrUsage, o.StatusPort)
	}
	for _, p := range []*string{&o.StateDir, &o.Layout.ConfigFile, &o.Layout.MapsDir, &o.Layout.SSLCertsDir, &o.Layout.GeneralStorageDir} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUsage, *p, err)
		}
		*p = abs
	}
	return nil
}

// paths inside the state dir.
func (o *Options) masterSocket() string { return filepath.Join(o.StateDir, "master.sock") }
func (o *Options) adminSocket() string  { return filepath.Join(o.StateDir, "admin.sock") }
func (o *Options) agentConfig() string  { return filepath.Join(o.StateDir, "agent.cfg") }
func (o *Options) manifestPath() string { return filepath.Join(o.StateDir, "current.json") }
func (o *Options) lkgPath() string      { return filepath.Join(o.StateDir, "last-known-good.json") }
func (o *Options) pidFile() string      { return filepath.Join(o.StateDir, "haproxy.pid") }
func (o *Options) launchFile() string   { return launchFile(o.StateDir) }

// agentConfigText is the extra configuration file passed after the config file: its
// global section merges with the config's and gives the agent its admin socket.
func (o *Options) agentConfigText() string {
	return "# written by haptic-agent; passed to haproxy after the config file\nglobal\n" +
		"    stats socket " + o.adminSocket() + " mode 600 level admin expose-fd listeners\n"
}

// BootstrapConfig is the built-in configuration HAProxy starts with before the first
// apply: hard-stop-after and a status frontend answering /healthz. The admin socket
// comes from agent.cfg.
func BootstrapConfig(statusAddress string, statusPort int) string {
	return fmt.Sprintf(`# haptic-agent bootstrap configuration
global
    hard-stop-after 10s

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend status
    bind %s:%d
    http-request return status 200 content-type text/plain string "ok" if { path /healthz }
    http-request return status 404
`, statusAddress, statusPort)
}
