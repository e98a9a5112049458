//go:build benchgw

package bench

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/haproxy-haptic/haptic/internal/webhook"
)

// chartDeployInterval is charts/haptic/values.yaml's controller.config.dataplane.
// minDeploymentInterval: the product default the bench measures unless
// BENCH_DEPLOY_INTERVAL overrides it.
const chartDeployInterval = 5 * time.Second

// install brings HAPTIC up as `make run` does (CRDs, credentials, the HAProxy and
// controller Deployments, the chart's libraries merged with deploy/local's
// overlay, the admission webhook), with the chart's dataplane timings and the
// experimental channel on, then creates the Gateways and waits for their addresses.
func (r *run) install() error {
	if left, err := r.kube.CoreV1().Namespaces().List(r.ctx, metav1.ListOptions{LabelSelector: runLabel + "=" + r.runID}); err != nil {
		return err
	} else if len(left.Items) > 0 {
		r.logf("removing %d namespaces an earlier, interrupted run left behind", len(left.Items))
		if err := r.uninstall(); err != nil {
			return fmt.Errorf("clear an earlier run: %w", err)
		}
	}
	r.logf("installing HAPTIC into namespace %s", r.ctrlNS)
	if _, err := r.kubectl("apply", "--server-side", "--force-conflicts", "-f", filepath.Join(r.root, "charts/haptic/crds/")); err != nil {
		return err
	}
	namespaces := []string{r.ctrlNS}
	for _, g := range r.k.Gateways {
		namespaces = append(namespaces, g.Namespace)
	}
	for _, ns := range namespaces {
		if err := r.createNamespace(ns); err != nil {
			return err
		}
	}
	password := randomToken(18)
	if err := r.createSecret(r.ctrlNS, "haptic-agent-credentials", corev1.SecretTypeOpaque, map[string][]byte{
		"username": []byte("haptic"), "password": []byte(password), "credentials": []byte("haptic:" + password)}); err != nil {
		return err
	}
	kubeconfig, err := os.ReadFile(r.c.Config.Kubeconfig())
	if err != nil {
		return fmt.Errorf("admin kubeconfig: %w", err)
	}
	if err := r.createSecret(r.ctrlNS, "haptic-kubeconfig", corev1.SecretTypeOpaque, map[string][]byte{"kubeconfig": kubeconfig}); err != nil {
		return err
	}
	cert, err := webhook.NewCertificate([]string{"haptic-webhook." + r.ctrlNS + ".svc"}, 24*time.Hour)
	if err != nil {
		return err
	}
	if err := r.createSecret(r.ctrlNS, "haptic-webhook-tls", corev1.SecretTypeTLS, map[string][]byte{
		"tls.crt": cert.Cert, "tls.key": cert.Key}); err != nil {
		return err
	}
	for _, f := range []string{"deploy/local/10-haproxy.yaml", "deploy/local/20-controller.yaml"} {
		if err := r.applyManifest(f); err != nil {
			return err
		}
	}
	if _, err := r.kubectl("-n", r.ctrlNS, "scale", "deployment/haproxy", fmt.Sprintf("--replicas=%d", r.k.HAProxyReplicas)); err != nil {
		return err
	}
	if err := r.applyConfig(); err != nil {
		return err
	}
	if _, err := r.kubectl("-n", r.ctrlNS, "rollout", "status", "deployment/haptic-controller", "--timeout=180s"); err != nil {
		return err
	}
	if err := r.registerWebhook(cert.CA); err != nil {
		return err
	}
	if _, err := r.kubectl("-n", r.ctrlNS, "rollout", "status", "deployment/haproxy", "--timeout=180s"); err != nil {
		return err
	}
	return r.createGateways()
}

// benchOverlay is merged after deploy/local's overlay: the bench's own IngressClass
// and GatewayClass controller (other users of the shared cluster keep theirs), the
// chart's dataplane values, and the experimental channel (the CRDs are Experimental).
func (r *run) benchOverlay() map[string]any {
	interval := chartDeployInterval
	if r.k.DeployInterval > 0 {
		interval = r.k.DeployInterval
	}
	spec := map[string]any{
		"dataplane": map[string]any{
			"minDeploymentInterval":     interval.String(),
			"driftPreventionInterval":   "60s",
			"configPublishInterval":     "10s",
			"reloadVerificationTimeout": "60s",
			"syncTimeout":               "2m",
		},
		"gateways": map[string]any{"provisioning": "PerGateway", "controllerName": r.controllerName()},
		"templatingSettings": map[string]any{"extraContext": map[string]any{
			"ingressClass": "haptic-bench", "httpPort": 8080, "experimentalChannel": true}},
	}
	if r.k.WatchDebounce >= 0 {
		spec["watchedResources"] = map[string]any{
			"gateways":    map[string]any{"debounceInterval": debounceString(r.k.WatchDebounce)},
			"http-routes": map[string]any{"debounceInterval": debounceString(r.k.WatchDebounce)},
		}
	}
	return map[string]any{"apiVersion": "haproxy-haptic.org/v1alpha1", "kind": "HAProxyTemplateConfig",
		"metadata": map[string]any{"name": "haptic-config", "namespace": r.ctrlNS}, "spec": spec}
}

func debounceString(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

func (r *run) controllerName() string { return "haproxy-haptic.org/bench" }

// applyConfig merges the libraries as scripts/run-local.sh does (haptic merge),
// with the bench overlay last, and applies the result.
func (r *run) applyConfig() error {
	overlay, err := yaml.Marshal(r.benchOverlay())
	if err != nil {
		return err
	}
	dir := r.t.TempDir()
	overlayFile := filepath.Join(dir, "bench-overlay.yaml")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		return err
	}
	args := []string{"merge"}
	for _, l := range []string{"base", "ingress", "gateway"} {
		args = append(args, "-f", filepath.Join(r.root, "charts/haptic/libraries", l+".yaml"))
	}
	args = append(args, "-f", filepath.Join(r.root, "deploy/local/30-haptic-overlay.yaml"), "-f", overlayFile)
	cmd := exec.CommandContext(r.ctx, filepath.Join(r.root, "bin/haptic"), args...)
	merged, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("haptic merge: %w", err)
	}
	merged = []byte(strings.ReplaceAll(string(merged), "namespace: haptic\n", "namespace: "+r.ctrlNS+"\n"))
	if err := os.WriteFile(filepath.Join(r.out, "cluster", "haptic-config.yaml"), merged, 0o644); err != nil {
		if err := os.MkdirAll(filepath.Join(r.out, "cluster"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(r.out, "cluster", "haptic-config.yaml"), merged, 0o644); err != nil {
			return err
		}
	}
	_, err = r.kubectl("-n", r.ctrlNS, "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(r.out, "cluster", "haptic-config.yaml"))
	return err
}

// applyManifest applies a deploy/local manifest moved into the controller's namespace.
func (r *run) applyManifest(rel string) error {
	data, err := os.ReadFile(filepath.Join(r.root, rel))
	if err != nil {
		return err
	}
	text := strings.NewReplacer("namespace: haptic", "namespace: "+r.ctrlNS, "--namespace=haptic", "--namespace="+r.ctrlNS).Replace(string(data))
	f := filepath.Join(r.t.TempDir(), filepath.Base(rel))
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		return err
	}
	_, err = r.kubectl("-n", r.ctrlNS, "apply", "-f", f)
	return err
}

func (r *run) createNamespace(name string) error {
	_, err := r.kube.CoreV1().Namespaces().Create(r.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: map[string]string{runLabel: r.runID}}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		ns, gerr := r.kube.CoreV1().Namespaces().Get(r.ctx, name, metav1.GetOptions{})
		if gerr != nil {
			return gerr
		}
		if ns.Labels[runLabel] != r.runID {
			return fmt.Errorf("namespace %s exists and is not the bench's (no %s label): refusing to use it", name, runLabel)
		}
		if ns.DeletionTimestamp != nil {
			return fmt.Errorf("namespace %s is still terminating from an earlier run", name)
		}
		err = nil
	}
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	r.mu.Lock()
	r.secretNS[name] = true
	r.mu.Unlock()
	return r.eventually("default ServiceAccount in "+name, 30*time.Second, 100*time.Millisecond, func() (bool, string) {
		_, err := r.kube.CoreV1().ServiceAccounts(name).Get(r.ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
}

func (r *run) createSecret(ns, name string, typ corev1.SecretType, data map[string][]byte) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: typ, Data: data}
	_, err := r.kube.CoreV1().Secrets(ns).Create(r.ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = r.kube.CoreV1().Secrets(ns).Update(r.ctx, s, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("secret %s/%s: %w", ns, name, err)
	}
	return nil
}

// webhookName is the run's ValidatingWebhookConfiguration.
func (r *run) webhookName() string { return "haptic-bench-" + r.ctrlNS }

// registerWebhook registers the controller's admission webhook for the run's
// namespaces (failurePolicy Fail, as the chart).
func (r *run) registerWebhook(ca []byte) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "haptic-webhook"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app.kubernetes.io/component": "controller"},
			Ports: []corev1.ServicePort{{Name: "webhook", Port: 443, TargetPort: intstr.FromInt32(9443)}}}}
	if _, err := r.kube.CoreV1().Services(r.ctrlNS).Create(r.ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := r.eventually("the webhook Service's endpoint", 60*time.Second, 250*time.Millisecond, func() (bool, string) {
		out, err := r.kubectl("-n", r.ctrlNS, "get", "endpointslices", "-l", "kubernetes.io/service-name=haptic-webhook",
			"-o", "jsonpath={.items[*].endpoints[*].addresses[*]}")
		return err == nil && strings.TrimSpace(out) != "", out
	}); err != nil {
		return err
	}
	fail := admissionv1.Fail
	none := admissionv1.SideEffectClassNone
	timeout := int32(10)
	path := "/validate"
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{runLabel: r.runID}}
	hook := func(name string, rules ...admissionv1.RuleWithOperations) admissionv1.ValidatingWebhook {
		return admissionv1.ValidatingWebhook{Name: name, Rules: rules, FailurePolicy: &fail, SideEffects: &none,
			TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: selector,
			ClientConfig: admissionv1.WebhookClientConfig{CABundle: ca,
				Service: &admissionv1.ServiceReference{Name: "haptic-webhook", Namespace: r.ctrlNS, Path: &path}}}
	}
	ops := []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}
	cfg := &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: r.webhookName()},
		Webhooks: []admissionv1.ValidatingWebhook{
			hook("ingresses.haproxy-haptic.org", admissionv1.RuleWithOperations{Operations: ops,
				Rule: admissionv1.Rule{APIGroups: []string{"networking.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"ingresses"}}}),
			hook("routes.gateway.haproxy-haptic.org",
				admissionv1.RuleWithOperations{Operations: ops, Rule: admissionv1.Rule{APIGroups: []string{"gateway.networking.k8s.io"},
					APIVersions: []string{"v1"}, Resources: []string{"gateways", "httproutes", "grpcroutes"}}},
				admissionv1.RuleWithOperations{Operations: ops, Rule: admissionv1.Rule{APIGroups: []string{"gateway.networking.k8s.io"},
					APIVersions: []string{"v1beta1"}, Resources: []string{"referencegrants"}}}),
		}}
	_ = r.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(r.ctx, cfg.Name, metav1.DeleteOptions{})
	_, err := r.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(r.ctx, cfg, metav1.CreateOptions{})
	return err
}

// createGateways creates the GatewayClass and one Gateway per target (an HTTP
// listener on port 80 admitting routes from every namespace, as upstream's), and
// waits until each is Programmed with an address.
func (r *run) createGateways() error {
	_ = r.gw.GatewayV1().GatewayClasses().Delete(r.ctx, r.className, metav1.DeleteOptions{})
	if _, err := r.gw.GatewayV1().GatewayClasses().Create(r.ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: r.className},
		Spec:       gwv1.GatewayClassSpec{ControllerName: gwv1.GatewayController(r.controllerName())},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("GatewayClass: %w", err)
	}
	all := gwv1.NamespacesFromAll
	for _, g := range r.k.Gateways {
		if _, err := r.gw.GatewayV1().Gateways(g.Namespace).Create(r.ctx, &gwv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: g.Name},
			Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(r.className), Listeners: []gwv1.Listener{{
				Name: "http", Port: 80, Protocol: gwv1.HTTPProtocolType,
				AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: &all}},
			}}},
		}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("Gateway %s: %w", g, err)
		}
	}
	for _, g := range r.k.Gateways {
		if err := r.eventually(g.String()+" Programmed with an address", 3*time.Minute, 250*time.Millisecond, func() (bool, string) {
			obj, err := r.gw.GatewayV1().Gateways(g.Namespace).Get(r.ctx, g.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, c := range obj.Status.Conditions {
				if c.Type == string(gwv1.GatewayConditionProgrammed) && c.Status == metav1.ConditionTrue &&
					c.ObservedGeneration == obj.Generation && len(obj.Status.Addresses) > 0 {
					r.addrs[g] = obj.Status.Addresses[0].Value
					return true, ""
				}
			}
			return false, fmt.Sprintf("%+v", obj.Status)
		}); err != nil {
			return err
		}
		r.logf("Gateway %s: address %s", g, r.addrs[g])
	}
	// The fleet answers: an unknown host is 404 on every Gateway.
	for g, addr := range r.addrs {
		if err := r.eventually(g.String()+" answers 404 for an unknown host", 2*time.Minute, 100*time.Millisecond, func() (bool, string) {
			code, _, _, err := r.get(addr, "80", "unknown.example.com", "/")
			return code == 404, fmt.Sprint(code, err)
		}); err != nil {
			return err
		}
	}
	return nil
}

// uninstall removes what the run created: its namespaces (Gateways, routes,
// workloads, HAPTIC), the webhook registration and the GatewayClass.
func (r *run) uninstall() error {
	var errs []string
	if err := r.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(r.ctx, r.webhookName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err.Error())
	}
	list, err := r.kube.CoreV1().Namespaces().List(r.ctx, metav1.ListOptions{LabelSelector: runLabel + "=" + r.runID})
	if err != nil {
		return err
	}
	// Workload namespaces first, while the controller still runs (it removes the
	// Gateways' fleets), then the controller's own.
	for _, ns := range list.Items {
		if ns.Name != r.ctrlNS {
			if err := r.kube.CoreV1().Namespaces().Delete(r.ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err.Error())
			}
		}
	}
	if err := r.gw.GatewayV1().GatewayClasses().Delete(r.ctx, r.className, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err.Error())
	}
	if err := r.kube.CoreV1().Namespaces().Delete(r.ctx, r.ctrlNS, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err.Error())
	}
	if err := r.eventually("the run's namespaces are gone", 5*time.Minute, time.Second, func() (bool, string) {
		l, err := r.kube.CoreV1().Namespaces().List(r.ctx, metav1.ListOptions{LabelSelector: runLabel + "=" + r.runID})
		if err != nil {
			return false, err.Error()
		}
		names := []string{}
		for _, ns := range l.Items {
			names = append(names, ns.Name)
		}
		return len(names) == 0, strings.Join(names, ",")
	}); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// secretInventory lists every value of every Secret in the run's namespaces (all
// of them were created by the run, by the runner or by HAPTIC).
func (r *run) secretInventory() (int, []SecretValue, error) {
	var values []SecretValue
	count := 0
	r.mu.Lock()
	namespaces := make([]string, 0, len(r.secretNS))
	for ns := range r.secretNS {
		namespaces = append(namespaces, ns)
	}
	r.mu.Unlock()
	for _, ns := range namespaces {
		list, err := r.kube.CoreV1().Secrets(ns).List(r.ctx, metav1.ListOptions{})
		if err != nil {
			return 0, nil, fmt.Errorf("list Secrets in %s: %w", ns, err)
		}
		for _, s := range list.Items {
			count++
			for k, v := range s.Data {
				values = append(values, SecretValue{Namespace: ns, Name: s.Name, Key: k, Value: v})
			}
		}
	}
	r.logf("secret inventory: %d Secrets, %d values in %d namespaces", count, len(values), len(namespaces))
	return count, values, nil
}

// collectLogs copies the run's pods' container logs (what the process node
// captured) into the artifacts.
func (r *run) collectLogs() {
	dir := r.c.Config.PodsDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		r.harnessErr("read pod logs: %v", err)
		return
	}
	for _, e := range entries {
		ns, _, _ := strings.Cut(e.Name(), "_")
		r.mu.Lock()
		ours := r.secretNS[ns]
		r.mu.Unlock()
		if !ours || strings.HasPrefix(ns, "bench-scale-") {
			continue
		}
		logs, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*.log"))
		for _, l := range logs {
			data, err := os.ReadFile(l)
			if err != nil {
				continue
			}
			if len(data) > 8<<20 { // the tail is what explains a failure
				data = data[len(data)-8<<20:]
			}
			dst := filepath.Join(r.out, "logs", e.Name(), filepath.Base(l))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
				_ = os.WriteFile(dst, data, 0o644)
			}
		}
	}
}

func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return hex.EncodeToString([]byte(time.Now().String()))
	}
	return strings.TrimRight(base64.RawURLEncoding.EncodeToString(b), "=")
}
