package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/haproxy-haptic/haptic/internal/agent"
	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/validate/haproxycheck"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt, syscall.SIGUSR1)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == "launch" {
		os.Exit(launch(ctx, os.Args[2:], os.Stderr))
	}
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil))
}

// config is what the command line and environment say.
type config struct {
	listen         string
	verifyInterval time.Duration
	opts           agent.Options
}

// parse reads flags and the environment. Errors are usage errors (exit code 2).
func parse(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("haptic-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	o := &c.opts
	d := haproxycheck.DefaultLayout
	fs.StringVar(&c.listen, "listen", ":5555", "address of the agent API")
	fs.StringVar(&o.Binary, "haproxy-binary", "haproxy", "HAProxy binary")
	fs.StringVar(&o.Layout.ConfigFile, "config-file", d.ConfigFile, "HAProxy configuration file")
	fs.StringVar(&o.Layout.MapsDir, "maps-dir", d.MapsDir, "directory of map files")
	fs.StringVar(&o.Layout.SSLCertsDir, "ssl-dir", d.SSLCertsDir, "directory of certificates and crt-lists")
	fs.StringVar(&o.Layout.GeneralStorageDir, "general-dir", d.GeneralStorageDir, "directory of general files")
	fs.StringVar(&o.StateDir, "state-dir", "/var/lib/haptic-agent", "agent state: manifest, last known good set, sockets")
	fs.DurationVar(&o.ReloadVerificationTimeout, "reload-verification-timeout", agent.MaxReloadVerificationTimeout,
		"how long a reload may take to be confirmed before the last known good set is restored (at most 60s; default "+
			"$"+envReloadVerificationTimeout+", else 60s); a controller's request may ask for another bound")
	credFile := fs.String("credentials-file", "", "file holding 'username:password' (else HAPTIC_AGENT_USERNAME / HAPTIC_AGENT_PASSWORD)")
	bootstrap := fs.String("bootstrap-config", "", "configuration HAProxy starts with before the first apply (default: built-in)")
	fs.StringVar(&o.StatusAddress, "status-address", "", "address of the built-in bootstrap config's status frontend (default: all)")
	fs.IntVar(&o.StatusPort, "status-port", 8404, "port of the built-in bootstrap config's /healthz frontend")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", 15*time.Second, "graceful HAProxy stop bound on shutdown")
	fs.DurationVar(&c.verifyInterval, "verify-interval", time.Minute,
		"how often map files and server lines on disk are compared with the worker (and corrected); 0 disables")
	fs.BoolVar(&o.External, "external-haproxy", false,
		"HAProxy runs in a container of its own (`haptic-agent launch` on the same state dir): adopt it, never start or stop it")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := envDuration(fs, "reload-verification-timeout", envReloadVerificationTimeout, getenv); err != nil {
		return nil, err
	}
	if c.verifyInterval < 0 {
		return nil, fmt.Errorf("verify interval %s is negative", c.verifyInterval)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	var err error
	if o.Username, o.Password, err = agentapi.Credentials(*credFile, getenv); err != nil {
		return nil, err
	}
	if *bootstrap != "" {
		data, err := os.ReadFile(*bootstrap)
		if err != nil {
			return nil, fmt.Errorf("bootstrap config: %w", err)
		}
		o.BootstrapConfig = string(data)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	o.HAProxyOutput = stderr
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// envReloadVerificationTimeout is the environment's default for
// --reload-verification-timeout (the chart sets it from the template config's
// spec.dataplane.reloadVerificationTimeout).
const envReloadVerificationTimeout = "HAPTIC_AGENT_RELOAD_VERIFICATION_TIMEOUT"

// envDuration sets flag name from the environment variable env unless the command
// line set it.
func envDuration(fs *flag.FlagSet, name, env string, getenv func(string) string) error {
	v := getenv(env)
	if v == "" {
		return nil
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	if set {
		return nil
	}
	if err := fs.Set(name, v); err != nil {
		return fmt.Errorf("%s: %w", env, err)
	}
	return nil
}

// run starts the agent and serves until ctx ends. ready, if set, receives the API
// address once it listens. It returns the exit code: 2 for usage errors, 1 for
// runtime failures.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready chan<- string) int {
	c, err := parse(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "haptic-agent: %v\n", err)
		return 2
	}
	log := c.opts.Logger
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		fmt.Fprintf(stderr, "haptic-agent: listen: %v\n", err)
		return 1
	}
	a, err := agent.New(c.opts)
	if err != nil {
		fmt.Fprintf(stderr, "haptic-agent: %v\n", err)
		return 2
	}
	if err := a.Start(ctx); err != nil {
		ln.Close()
		_ = a.Close()
		fmt.Fprintf(stderr, "haptic-agent: start haproxy: %v\n", err)
		return 1
	}
	vctx, stopVerify := context.WithCancel(ctx)
	verifyDone := make(chan struct{})
	go func() { a.VerifyLoop(vctx, c.verifyInterval); close(verifyDone) }()
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("agent listening", "addr", ln.Addr().String())
	if ready != nil {
		ready <- ln.Addr().String()
	}
	code := 0
supervise:
	for {
		select {
		case <-ctx.Done():
			break supervise
		case err := <-errc:
			log.Error("api server stopped", "error", err)
			code = 1
			break supervise
		case <-a.Exited():
			// Killed or crashed: start it again on the last known good set (the pod
			// is unready meanwhile: /healthz answers 503).
			if err := a.Restart(ctx); err != nil {
				log.Error("haproxy master exited and could not be restarted", "error", err)
				code = 1
				break supervise
			}
		}
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutCtx)
	stopVerify()
	<-verifyDone
	if err := a.Close(); err != nil {
		log.Error("stop haproxy", "error", err)
		code = 1
	}
	log.Info("agent stopped")
	return code
}
