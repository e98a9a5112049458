//go:build conformance

package conformance

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/apis/v1alpha2"
	"sigs.k8s.io/gateway-api/apis/v1alpha3"
	"sigs.k8s.io/gateway-api/apis/v1beta1"
	gwconformance "sigs.k8s.io/gateway-api/conformance"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/config"
	"sigs.k8s.io/gateway-api/conformance/utils/flags"
	"sigs.k8s.io/gateway-api/conformance/utils/roundtripper"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"
	"sigs.k8s.io/yaml"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	hapticconfig "github.com/haproxy-haptic/haptic/internal/config"
	"github.com/haproxy-haptic/haptic/internal/controller"
	"github.com/haproxy-haptic/haptic/internal/version"
	"github.com/haproxy-haptic/haptic/localcluster/cluster"
	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// The GatewayClass the suite runs against. Cluster-scoped: run one conformance
// run at a time on a cluster.
const gatewayClassName = "haptic"

// profiles are the conformance profiles a run tests, in one suite run: a test
// counts in every profile that holds all its features (the Gateway tests in all).
var profiles = []suite.ConformanceProfile{
	suite.GatewayHTTPConformanceProfile,
	suite.GatewayGRPCConformanceProfile,
	suite.GatewayTLSConformanceProfile,
}

// reportPaths are where a full run writes the ConformanceReport (relative to this
// directory), one file per profile, each with that profile's report only;
// `-args -report-output=FILE` writes the whole report (all profiles) to FILE instead.
var reportPaths = map[suite.ConformanceProfileName]string{
	suite.GatewayHTTPConformanceProfileName: "../../docs/conformance/haptic-gateway-http-report.yaml",
	suite.GatewayGRPCConformanceProfileName: "../../docs/conformance/haptic-gateway-grpc-report.yaml",
	suite.GatewayTLSConformanceProfileName:  "../../docs/conformance/haptic-gateway-tls-report.yaml",
}

// What is claimed is not written here: the gateway library lists its features
// (spec.gateways.supportedFeatures), the controller publishes them as the
// GatewayClass' status.supportedFeatures, and a full run lets the suite infer them
// from there. Exploring beyond the claim (never written to the docs reports
// unless -report-output names a file): -supported-features=A,B adds features (the
// upstream flag); -explore-extended adds every extended feature of the profiles,
// and the GRPCRoute ones.
var exploreExtended = flag.Bool("explore-extended", false,
	"also run the tests of every extended feature of the profiles run (a report goes only to -report-output)")

// supportedFeatures says what the suite tests: nil for a full run of the claim
// (the suite infers it from the GatewayClass), else the claim plus what the flags
// add; exploring reports whether the flags added anything.
func supportedFeatures(claim suite.FeaturesSet, opts suite.ConfigurableOptions) (s []features.FeatureName, exploring bool) {
	extra := sets.New(opts.SupportedFeatures...)
	if *exploreExtended {
		for _, p := range profiles {
			extra = extra.Union(p.ExtendedFeatures)
		}
		extra = extra.Union(features.SetsToNamesSet(features.GRPCRouteExtendedFeatures))
	}
	exploring = extra.Difference(claim).Len() > 0
	if !exploring && opts.RunTest == "" {
		return nil, false // inferred: the report says so
	}
	// The suite infers nothing for one test (-run-test): the claim goes in as is.
	return sets.List(claim.Union(extra)), exploring
}

// claimedFeatures waits until the controller published the GatewayClass'
// supportedFeatures and returns them.
func claimedFeatures(t *testing.T, ctx context.Context, cl client.Client) suite.FeaturesSet {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		gc := &gwv1.GatewayClass{}
		err := cl.Get(ctx, client.ObjectKey{Name: gatewayClassName}, gc)
		if err == nil && len(gc.Status.SupportedFeatures) > 0 {
			s := suite.FeaturesSet{}
			for _, f := range gc.Status.SupportedFeatures {
				s.Insert(features.FeatureName(f.Name))
			}
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("GatewayClass %s has no status.supportedFeatures after 90s (err %v)", gatewayClassName, err)
		}
		time.Sleep(time.Second)
	}
}

// timeouts are the suite's defaults, stretched for a loaded 2-core machine and a
// data plane that starts pods per Gateway.
func timeouts() config.TimeoutConfig {
	tc := config.DefaultTimeoutConfig()
	tc.GatewayMustHaveAddress = 240 * time.Second
	tc.GatewayMustHaveCondition = 240 * time.Second
	tc.GatewayStatusMustHaveListeners = 90 * time.Second
	tc.GatewayListenersMustHaveConditions = 90 * time.Second
	tc.HTTPRouteMustHaveCondition = 90 * time.Second
	tc.HTTPRouteMustNotHaveParents = 90 * time.Second
	tc.RouteMustHaveParents = 90 * time.Second
	tc.LatestObservedGenerationSet = 90 * time.Second
	tc.MaxTimeToConsistency = 45 * time.Second
	tc.NamespacesMustBeReady = 420 * time.Second
	tc.DeleteTimeout = 30 * time.Second
	tc.DefaultTestTimeout = 120 * time.Second
	return tc
}

func implementation() confv1.Implementation {
	return confv1.Implementation{
		Organization: "haproxy-haptic",
		Project:      "haptic",
		URL:          "https://github.com/haproxy-haptic/haptic",
		Version:      version.Version,
		Contact:      []string{"https://github.com/haproxy-haptic/haptic/issues"},
	}
}

const (
	agentUser = "haptic"
	agentPass = "conformance-secret-password"
)

// TestGatewayHTTPConformance deploys HAPTIC like make run does — the HAProxy
// fleet of deploy/local, the chart's libraries, the controller in this process —
// with per-Gateway provisioning, and runs the upstream suite's profiles
// (GATEWAY-HTTP and GATEWAY-GRPC, see profiles) against GatewayClass "haptic".
// Its name predates GATEWAY-GRPC; make conformance runs it by this name.
func TestGatewayHTTPConformance(t *testing.T) {
	c := clustertest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ns := c.NewNamespace(t) // the controller's namespace; per-Gateway HAProxy Deployments go here
	t.Logf("controller namespace %s", ns.Name)

	kubectl(t, c, ctx, "apply", "--server-side", "--force-conflicts", "-f", c.Config.CRDDir())
	deleteStaleGatewayCRDs(t, c, ctx)
	kubectl(t, c, ctx, "apply", "--server-side", "--force-conflicts", "-f", "../../charts/haptic/crds/")
	kubectl(t, c, ctx, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
	if _, err := c.Client.CoreV1().Secrets(ns.Name).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "haptic-agent-credentials"},
		StringData: map[string]string{"username": agentUser, "password": agentPass, "credentials": agentUser + ":" + agentPass},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create credentials: %v", err)
	}
	applyFile(t, c, ctx, ns.Name, "../../deploy/local/10-haproxy.yaml")
	applyText(t, c, ctx, ns.Name, controllerConfig(t, ns.Name))
	ensureGatewayClass(t, ctx, c.REST)

	logPath := startController(t, ctx, c, ns.Name)
	t.Logf("controller log: %s", logPath)

	runSuite(t, c, ns.Name)
}

// deleteStaleGatewayCRDs deletes Gateway API CRDs of another release that the
// apply left behind — kinds the release dropped, e.g. v1.4's XListenerSet on a
// cluster first brought up at v1.4 — since the suite refuses to run on a mix of
// bundle versions.
func deleteStaleGatewayCRDs(t *testing.T, c *clustertest.Cluster, ctx context.Context) {
	t.Helper()
	out := kubectl(t, c, ctx, "get", "crd", "-o",
		`jsonpath={range .items[*]}{.metadata.name}{" "}{.metadata.annotations.gateway\.networking\.k8s\.io/bundle-version}{"\n"}{end}`)
	for _, line := range strings.Split(out, "\n") {
		name, version, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || version == "" || version == cluster.GatewayAPIVersion {
			continue
		}
		t.Logf("deleting CRD %s of Gateway API %s (installed: %s)", name, version, cluster.GatewayAPIVersion)
		kubectl(t, c, ctx, "delete", "crd", name)
	}
}

// controllerConfig merges the chart's libraries and deploy/local's overlay as
// `haptic merge` does, plus this run's overlay.
func controllerConfig(t *testing.T, ns string) string {
	t.Helper()
	var files []string
	for _, l := range []string{"base", "ingress", "gateway"} {
		f := "../../charts/haptic/libraries/" + l + ".yaml"
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		} else {
			t.Logf("library %s: %v (left out)", f, err)
		}
	}
	files = append(files, "../../deploy/local/30-haptic-overlay.yaml")
	// PerGateway: every Gateway of the class gets HAProxy pods of its own (a copy
	// of the haproxy Deployment) and their IPs as its status.addresses — the suite's
	// Gateways share ports (80, 443), which one shared fleet cannot serve.
	// ingressClass: the namespace, so that the base library ignores other Ingresses.
	// A Gateway's own pods bind no Ingress frontend, so its listeners may use any
	// port but the status port (GatewayPort8080 listens on 8080, the Ingress http
	// port of the default fleet). experimentalChannel: the cluster runs the
	// experimental CRDs, so the library reads their fields (HTTPRoute retry).
	overlay := fmt.Sprintf(`apiVersion: haproxy-haptic.org/v1alpha1
kind: HAProxyTemplateConfig
spec:
  gateways:
    provisioning: %s
  templatingSettings:
    extraContext:
      ingressClass: %s
      experimentalChannel: true
`, v1alpha1.GatewaysPerGateway, ns)
	f := filepath.Join(t.TempDir(), "overlay.yaml")
	if err := os.WriteFile(f, []byte(overlay), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, f)
	merged, err := hapticconfig.MergeFiles(files...)
	if err != nil {
		t.Fatal(err)
	}
	spec := merged["spec"].(map[string]any)
	delete(spec, "validationTests") // test fixtures: not needed in the cluster
	meta, _ := merged["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		merged["metadata"] = meta
	}
	meta["name"], meta["namespace"] = "haptic-config", ns
	if _, err := hapticconfig.Decode("conformance config", merged); err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// ensureGatewayClass creates (or takes over) GatewayClass "haptic" for HAPTIC's
// controller name; it is deleted at the end.
func ensureGatewayClass(t *testing.T, ctx context.Context, restConfig *rest.Config) {
	t.Helper()
	cl := newClient(t, restConfig)
	gc := &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: gatewayClassName},
		Spec:       gwv1.GatewayClassSpec{ControllerName: v1alpha1.DefaultGatewayControllerName},
	}
	existing := &gwv1.GatewayClass{}
	err := cl.Get(ctx, client.ObjectKey{Name: gatewayClassName}, existing)
	switch {
	case apierrors.IsNotFound(err):
		if err := cl.Create(ctx, gc); err != nil {
			t.Fatalf("create GatewayClass: %v", err)
		}
	case err != nil:
		t.Fatalf("get GatewayClass: %v", err)
	case existing.Spec.ControllerName != v1alpha1.DefaultGatewayControllerName:
		// controllerName is immutable: replace the class.
		if err := cl.Delete(ctx, existing); err != nil {
			t.Fatalf("delete GatewayClass: %v", err)
		}
		if err := cl.Create(ctx, gc); err != nil {
			t.Fatalf("create GatewayClass: %v", err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cl.Delete(ctx, gc); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete GatewayClass: %v", err)
		}
	})
}

// newClient is a controller-runtime client that knows the Gateway API types.
func newClient(t *testing.T, restConfig *rest.Config) client.Client {
	t.Helper()
	cl, err := client.New(rest.CopyConfig(restConfig), client.Options{})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	for _, install := range []func(*runtime.Scheme) error{v1alpha3.Install, v1alpha2.Install, v1beta1.Install,
		gwv1.Install, apiextensionsv1.AddToScheme} {
		if err := install(cl.Scheme()); err != nil {
			t.Fatal(err)
		}
	}
	return cl
}

// startController runs `haptic run` in this process, as test/e2e does; its log
// goes to a file (out/conformance/controller.log), which the test names.
func startController(t *testing.T, ctx context.Context, c *clustertest.Cluster, ns string) string {
	t.Helper()
	logDir := filepath.Join(repoRoot(), "out", "conformance")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(logDir, "controller.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(&syncWriter{w: logFile}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	go func() {
		done <- controller.Run(ctx, controller.Options{
			Rest: c.REST, Namespace: ns, ConfigName: "haptic-config",
			HAProxyBinary: "haproxy", Log: log, AgentHTTP: c.HTTPClient(2 * time.Minute),
		})
	}()
	// Cleanups run in reverse order: this one runs after the suite removed its
	// resources (registered later), so the controller sees those deletions.
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("controller did not stop")
		}
		logFile.Close()
	})
	go func() { // a controller that stops early is worth knowing at once
		select {
		case err := <-done:
			done <- err
			if ctx.Err() == nil {
				t.Logf("controller stopped early: %v", err)
			}
		case <-ctx.Done():
		}
	}()
	return logPath
}

// runSuite runs the upstream suite (as conformance.RunConformanceWithOptions
// does) and writes the report.
func runSuite(t *testing.T, c *clustertest.Cluster, controllerNS string) {
	crlog.SetLogger(zap.New(zap.WriteTo(os.Stdout), zap.UseDevMode(true)))
	restConfig := rest.CopyConfig(c.REST) // the suite sets its UserAgent per test
	cl := newClient(t, restConfig)
	cs, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		t.Fatal(err)
	}
	tc := timeouts()
	// The upstream flags (-run-test, -skip-tests, -supported-features, -debug,
	// -report-output, ...) as the suite reads them.
	co := suite.ConfigurableOptions{
		GatewayClassName:     gatewayClassName,
		CleanupBaseResources: true,
		CleanupTestResources: true,
		Implementation:       implementation(),
		ConformanceProfiles:  profileNames(),
	}
	flags.ApplyAll(&co)
	co.GatewayClassName, co.TimeoutConfig = gatewayClassName, tc
	claim := claimedFeatures(t, context.Background(), cl)
	var exploring bool
	co.SupportedFeatures, exploring = supportedFeatures(claim, co)
	dialer := netns.Dialer{Name: c.Config.Netns, Timeout: tc.RequestTimeout}
	opts := suite.ConformanceOptions{
		ConfigurableOptions: co,
		Client:              cl,
		Clientset:           cs,
		RestConfig:          restConfig,
		RoundTripper:        &roundtripper.DefaultRoundTripper{Debug: co.Debug, TimeoutConfig: tc, CustomDialContext: dialer.DialContext},
		ManifestFS:          []fs.FS{&gwconformance.Manifests},
	}
	watch := &interference{ours: controllerNS}
	opts.Hook = func(t *testing.T, _ suite.ConformanceTest, _ *suite.ConformanceTestSuite) { watch.check(t, cs) }
	watch.check(t, cs)
	t.Logf("GatewayClass %s; claimed features (its status): %v; tested: %v (none: inferred from the class); profiles: %v",
		opts.GatewayClassName, sets.List(claim), opts.SupportedFeatures, opts.ConformanceProfiles)
	cSuite, err := suite.NewConformanceTestSuite(opts)
	if err != nil {
		t.Fatalf("conformance suite: %v", err)
	}
	// The report is complete only once the parallel tests are done: in a cleanup,
	// which runs after the suite's own (registered by Run, so run first).
	t.Cleanup(func() { writeReports(t, cSuite, co, exploring, watch) })
	cSuite.Setup(t, tests.ConformanceTests)
	if err := cSuite.Run(t, tests.ConformanceTests); err != nil {
		t.Fatal(err)
	}
}

// writeReports writes the suite's ConformanceReport where it belongs: to
// -report-output (the whole report); else, for a full run of the claim, to the docs
// (one file per profile); else nowhere (one test, or features beyond the claim:
// not the report to keep).
func writeReports(t *testing.T, cSuite *suite.ConformanceTestSuite, co suite.ConfigurableOptions, exploring bool, watch *interference) {
	report, err := cSuite.Report()
	if err != nil {
		t.Errorf("report: %v", err)
		return
	}
	data, err := yaml.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("conformance report:\n%s", data)
	outs := map[string][]byte{}
	switch {
	case co.ReportOutputPath != "":
		outs[co.ReportOutputPath] = data
	case co.RunTest == "" && !exploring && !subtestFilter():
		for _, p := range profiles {
			out := reportPaths[p.Name]
			if watch.seen() {
				out = filepath.Join(repoRoot(), "out", "conformance", "interfered-"+filepath.Base(out))
			}
			outs[out] = profileReport(t, report, p.Name)
		}
	}
	for out, data := range outs {
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatalf("write report: %v", err)
		}
		t.Logf("report written to %s", out)
	}
	if len(outs) > 0 && watch.seen() {
		t.Errorf("another HAPTIC controller served the suite's Gateways during the run (%s): "+
			"the results are not HAPTIC's alone; run make conformance alone", strings.Join(watch.list(), ", "))
	}
}

// subtestFilter reports whether go test's -run picks some of the suite's tests
// (`-run 'TestGatewayHTTPConformance/^ListenerSet'`): the suite then sees a full
// run, but the report is not one to keep.
func subtestFilter() bool {
	f := flag.Lookup("test.run")
	return f != nil && strings.Contains(f.Value.String(), "/")
}

func profileNames() []suite.ConformanceProfileName {
	var s []suite.ConformanceProfileName
	for _, p := range profiles {
		s = append(s, p.Name)
	}
	return s
}

// profileReport is the report with only the named profile's results, as YAML.
func profileReport(t *testing.T, report *confv1.ConformanceReport, name suite.ConformanceProfileName) []byte {
	t.Helper()
	r := *report
	r.ProfileReports = nil
	for _, pr := range report.ProfileReports {
		if pr.Name == string(name) {
			r.ProfileReports = append(r.ProfileReports, pr)
		}
	}
	if len(r.ProfileReports) == 0 {
		t.Errorf("the report has no results for profile %s", name)
	}
	data, err := yaml.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// perGatewayAnnotation marks the HAProxy Deployments a controller runs for one
// Gateway (internal/controller/gatewaypods.go): value namespace/name.
const perGatewayAnnotation = "haproxy-haptic.org/gateway"

// interference notices other HAPTIC controllers serving the suite's Gateways.
// Every controller serves all GatewayClasses of controllerName
// haproxy-haptic.org/controller: a concurrent test that runs one (test/e2e's
// gateway test) provisions pods for the suite's Gateways and writes their status
// too. Per-Gateway Deployments for gateway-conformance-* Gateways outside this
// run's namespace give it away.
type interference struct {
	ours  string
	mu    sync.Mutex
	found map[string]bool
}

func (w *interference) check(t *testing.T, cs kubernetes.Interface) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	deps, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("interference check: %v", err)
		return
	}
	for _, d := range deps.Items {
		gw := d.Annotations[perGatewayAnnotation]
		if d.Namespace == w.ours || !strings.HasPrefix(gw, "gateway-conformance-") {
			continue
		}
		w.mu.Lock()
		if w.found == nil {
			w.found = map[string]bool{}
		}
		what := fmt.Sprintf("%s/%s for Gateway %s", d.Namespace, d.Name, gw)
		if !w.found[what] {
			w.found[what] = true
			t.Logf("WARNING: another HAPTIC controller runs HAProxy for a suite Gateway: Deployment %s", what)
		}
		w.mu.Unlock()
	}
}

func (w *interference) seen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.found) > 0
}

func (w *interference) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return sets.List(sets.KeySet(w.found))
}

func kubectl(t *testing.T, c *clustertest.Cluster, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := c.Kubectl(ctx, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// applyFile applies a deploy/local manifest with its namespace moved to ns.
func applyFile(t *testing.T, c *clustertest.Cluster, ctx context.Context, ns, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	applyText(t, c, ctx, ns, strings.ReplaceAll(string(data), "namespace: haptic", "namespace: "+ns))
}

func applyText(t *testing.T, c *clustertest.Cluster, ctx context.Context, ns, text string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	kubectl(t, c, ctx, "apply", "-n", ns, "-f", f)
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
