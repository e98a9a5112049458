package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/haproxy-haptic/haptic/internal/controller"
	"github.com/haproxy-haptic/haptic/internal/debug"
	"github.com/haproxy-haptic/haptic/internal/runtimelimits"
	"github.com/haproxy-haptic/haptic/internal/version"
)

type runFlags struct {
	kubeconfig, namespace, configName, metricsAddr, haproxyBinary, schemaDir string
	debugPort                                                                int
	verbose, leaderElect                                                     bool
	leaderLease, webhookAddr, webhookCertDir                                 string
	// Lease timings (0: the controller's defaults, 15s / 10s / 2s).
	leaseDuration, renewDeadline, retryPeriod time.Duration
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// defaultDebugPort is where pprof and heap dumps answer unless told otherwise.
const defaultDebugPort = 8080

// debugPortDefault is $HAPTIC_DEBUG_PORT when it is a number, else defaultDebugPort.
func debugPortDefault() int {
	if n, err := strconv.Atoi(os.Getenv("HAPTIC_DEBUG_PORT")); err == nil && n >= 0 {
		return n
	}
	return defaultDebugPort
}

func newRunCommand(stdout, stderr io.Writer) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the controller",
		Long: `Loads the HAProxyTemplateConfig named by --config-name (env CONFIG_NAME) in
--namespace (env POD_NAMESPACE), watches what it names, renders and validates the
configuration and delivers it to the HAProxy pods' agents.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runController(f, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (default: in-cluster)")
	fl.StringVar(&f.namespace, "namespace", envOr("POD_NAMESPACE", "haptic"), "namespace of the config and the HAProxy pods")
	fl.StringVar(&f.configName, "config-name", envOr("CONFIG_NAME", "haptic-config"), "HAProxyTemplateConfig name")
	fl.StringVar(&f.metricsAddr, "metrics-addr", envOr("METRICS_ADDR", ":9090"), "Prometheus /metrics listen address (empty disables)")
	// On by default, as the operations guide expects (loopback only: kubectl port-forward).
	fl.IntVar(&f.debugPort, "debug-port", debugPortDefault(), "pprof and /debug/heapdump port on 127.0.0.1 ($HAPTIC_DEBUG_PORT; 0 disables)")
	fl.StringVar(&f.haproxyBinary, "haproxy-binary", "haproxy", "HAProxy binary used to validate rendered configs")
	fl.StringVar(&f.schemaDir, "schema-dir", schemaDirDefault(), "extra OpenAPI v3 schemas or CRDs for typed access ($HAPTIC_SCHEMA_DIR)")
	fl.BoolVar(&f.leaderElect, "leader-elect", true, "with several replicas, only the one holding the Lease deploys and writes status")
	fl.StringVar(&f.leaderLease, "leader-election-lease", "", "Lease name in --namespace (default <config-name>-leader)")
	fl.DurationVar(&f.leaseDuration, "leader-lease-duration", 15*time.Second, "how long a Lease holds without renewal: a killed leader is replaced after at most this (a stopped one releases it at once)")
	fl.DurationVar(&f.renewDeadline, "leader-renew-deadline", 10*time.Second, "how long the leader retries renewing before it gives leadership up (less than the lease duration)")
	fl.DurationVar(&f.retryPeriod, "leader-retry-period", 2*time.Second, "interval of acquire and renew attempts")
	fl.StringVar(&f.webhookAddr, "webhook-addr", envOr("WEBHOOK_ADDR", ""), "admission webhook HTTPS listen address, e.g. :9443 (empty disables)")
	fl.StringVar(&f.webhookCertDir, "webhook-cert-dir", envOr("WEBHOOK_CERT_DIR", "/etc/haptic/webhook"), "directory with the webhook's tls.crt and tls.key (reloaded when they change)")
	fl.BoolVar(&f.verbose, "verbose", os.Getenv("LOG_LEVEL") == "debug", "debug logging")
	return cmd
}

func runController(f runFlags, stderr io.Writer) error {
	log := newLogger(stderr, f.verbose)
	if !f.verbose {
		log = newInfoLogger(stderr)
	}
	var cfg *rest.Config
	var err error
	if f.kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return usageError(fmt.Errorf("kubernetes config: %w", err))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	limits, err := runtimelimits.ApplyMemoryLimit(log)
	if err != nil {
		log.Warn("memory limit not applied", "error", err)
	}
	log.Info("HAPTIC starting", append([]any{"version", version.String("haptic"), "namespace", f.namespace, "config", f.configName}, limits.LogAttrs()...)...)
	if f.debugPort > 0 {
		// pprof and heap dumps answer on loopback only.
		srv := debug.New(debug.Options{Logger: log, HeapDumpDir: os.Getenv(debug.EnvHeapDumpDir)})
		go func() {
			if err := srv.ListenAndServe(ctx, debug.LoopbackAddr(f.debugPort)); err != nil {
				log.Error("debug server", "error", err)
			}
		}()
	}
	opts := controller.Options{
		Rest: cfg, Namespace: f.namespace, ConfigName: f.configName, MetricsAddr: f.metricsAddr,
		HAProxyBinary: f.haproxyBinary, SchemaDir: f.schemaDir, Log: log, PodName: os.Getenv("POD_NAME"),
	}
	if f.webhookAddr != "" {
		ln, err := net.Listen("tcp", f.webhookAddr)
		if err != nil {
			return fmt.Errorf("webhook listener: %w", err)
		}
		opts.WebhookListener, opts.WebhookCertDir = ln, f.webhookCertDir
	}
	if f.leaderElect {
		if f.renewDeadline >= f.leaseDuration || f.retryPeriod >= f.renewDeadline || f.retryPeriod <= 0 {
			return usageError(fmt.Errorf("leader election: want 0 < retry period (%s) < renew deadline (%s) < lease duration (%s)",
				f.retryPeriod, f.renewDeadline, f.leaseDuration))
		}
		opts.LeaderElection = &controller.LeaderElection{Lease: f.leaderLease, Identity: os.Getenv("POD_NAME"),
			LeaseDuration: f.leaseDuration, RenewDeadline: f.renewDeadline, RetryPeriod: f.retryPeriod}
	}
	return controller.Run(ctx, opts)
}
