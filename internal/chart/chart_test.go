package chart

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/config"
)

// libraryParts are the spec fields that come from the libraries alone.
var libraryParts = []string{"haproxyConfig", "templateSnippets", "maps", "files", "sslCertificates", "crtLists", "watchedResources"}

// valueSets are the values the manifest checks run with.
var valueSets = map[string]map[string]any{
	"defaults":     nil,
	"base only":    libs(true, false, false),
	"no gateway":   libs(true, true, false),
	"no ingress":   libs(true, false, true),
	"shared":       {"controller": map[string]any{"config": map[string]any{"gateways": map[string]any{"provisioning": "Shared"}}}},
	"existing":     {"haproxy": map[string]any{"agent": map[string]any{"credentials": map[string]any{"existingSecret": "mine"}}}},
	"no classes":   {"ingressClass": map[string]any{"create": false}, "gatewayClass": map[string]any{"create": false}},
	"full options": fullOptions(),
	"monitoring":   monitoringOn(),
	"minimal": {
		"controller": map[string]any{"webhook": map[string]any{"enabled": false}, "metricsService": map[string]any{"enabled": false}, "debugPort": 0},
		"haproxy":    map[string]any{"service": map[string]any{"enabled": false}},
	},
}

// monitoringOn turns on every monitoring object of the chart.
func monitoringOn() map[string]any {
	on := map[string]any{"enabled": true}
	return map[string]any{"monitoring": map[string]any{
		"serviceMonitor": on, "podMonitor": on, "prometheusRule": on, "dashboard": on,
	}}
}

func libs(base, ingress, gateway bool) map[string]any {
	return map[string]any{"controller": map[string]any{"templateLibraries": map[string]any{
		"base": map[string]any{"enabled": base}, "ingress": map[string]any{"enabled": ingress},
		"gateway": map[string]any{"enabled": gateway},
	}}}
}

func fullOptions() map[string]any {
	return map[string]any{
		"fullnameOverride": "lb",
		"imagePullSecrets": []any{map[string]any{"name": "pull"}},
		"controller": map[string]any{
			"debugPort": 6060, "logLevel": "debug", "schemaDir": "/schemas",
			"extraEnv":       []any{map[string]any{"name": "AUTOMEMLIMIT", "value": "0.8"}},
			"podAnnotations": map[string]any{"a": "b"}, "podLabels": map[string]any{"team": "net"},
			"nodeSelector": map[string]any{"k": "v"}, "priorityClassName": "high",
			"tolerations":    []any{map[string]any{"operator": "Exists"}},
			"serviceAccount": map[string]any{"name": "ctl", "annotations": map[string]any{"x": "y"}},
			"config": map[string]any{
				"templatingSettings":           map[string]any{"resourceAccess": "untyped", "extraContext": map[string]any{"maxconn": 5000}},
				"watchedResourcesIgnoreFields": []any{"metadata.managedFields"},
			},
		},
		"haproxy": map[string]any{
			"replicas": 3, "initialConfig": "global\n    hard-stop-after 5s\n",
			"resources": map[string]any{"limits": map[string]any{"cpu": "1500m"}},
			"service":   map[string]any{"type": "LoadBalancer", "annotations": map[string]any{"lb": "yes"}},
		},
		"ingressClass": map[string]any{"default": true},
	}
}

// TestManifestsParse renders the chart with several value sets and decodes every
// manifest strictly into its Go type (an unknown field is an error), and the
// HAProxyTemplateConfig with config.Decode (defaults and validation included).
func TestManifestsParse(t *testing.T) {
	t.Parallel()
	for name, vals := range valueSets {
		t.Run(name, func(t *testing.T) {
			r := renderChart(t, vals, nil)
			objects := r.all(t)
			if len(objects) == 0 {
				t.Fatal("nothing rendered")
			}
			seen := map[string]string{}
			for _, o := range objects {
				id := fmt.Sprintf("%v %s/%s", o.obj["apiVersion"], o.kind(), o.name())
				if o.kind() == "" || o.name() == "" || o.obj["apiVersion"] == nil {
					t.Errorf("%s: a manifest without apiVersion, kind or metadata.name: %v", o.file, o.obj)
				}
				if prev, dup := seen[id]; dup {
					t.Errorf("%s rendered twice (%s, %s)", id, prev, o.file)
				}
				seen[id] = o.file
				if ns, _ := field(o.obj, "metadata", "namespace").(string); ns != "" && ns != releaseNamespace {
					t.Errorf("%s: namespace %q, want the release's", id, ns)
				}
				if err := decodeTyped(o.obj); err != nil {
					t.Errorf("%s (%s): %v", id, o.file, err)
				}
			}
		})
	}
}

// decodeTyped decodes a manifest into its Go type, rejecting unknown fields.
func decodeTyped(obj map[string]any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var target any
	switch obj["kind"] {
	case "Deployment":
		target = &appsv1.Deployment{}
	case "Service":
		target = &corev1.Service{}
	case "ServiceAccount":
		target = &corev1.ServiceAccount{}
	case "Secret":
		target = &corev1.Secret{}
	case "ConfigMap":
		target = &corev1.ConfigMap{}
	case "ClusterRole":
		target = &rbacv1.ClusterRole{}
	case "ClusterRoleBinding":
		target = &rbacv1.ClusterRoleBinding{}
	case "Role":
		target = &rbacv1.Role{}
	case "RoleBinding":
		target = &rbacv1.RoleBinding{}
	case "IngressClass":
		target = &networkingv1.IngressClass{}
	case "GatewayClass":
		target = &gatewayv1.GatewayClass{}
	case "ValidatingWebhookConfiguration":
		target = &admissionregistrationv1.ValidatingWebhookConfiguration{}
	case "ServiceMonitor", "PodMonitor", "PrometheusRule":
		// The Prometheus Operator's types are not a dependency; monitoring_test.go
		// checks their content.
		if obj["apiVersion"] != "monitoring.coreos.com/v1" || field(obj, "spec") == nil {
			return fmt.Errorf("%v: want apiVersion monitoring.coreos.com/v1 and a spec", obj["kind"])
		}
		return nil
	case "PodDisruptionBudget":
		target = &policyv1.PodDisruptionBudget{}
	case v1alpha1.KindHAProxyTemplateConfig:
		_, err := config.Decode("rendered", obj)
		return err
	default:
		return fmt.Errorf("kind %v: not expected from this chart", obj["kind"])
	}
	strictErrs, err := sigsjson.UnmarshalStrict(data, target, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		return fmt.Errorf("%v", strictErrs)
	}
	return nil
}

// libraryFiles are the library files of the enabled libraries, in merge order.
func libraryFiles(base, ingress, gateway bool) []string {
	var out []string
	for _, l := range []struct {
		on   bool
		name string
	}{{base, "base"}, {ingress, "ingress"}, {gateway, "gateway"}} {
		if l.on {
			out = append(out, filepath.Join(libraryDir, l.name+".yaml"))
		}
	}
	return out
}

// TestConfigIsTheLibraryMerge checks that the rendered HAProxyTemplateConfig holds
// exactly what `config.MergeFiles` (haptic merge, validate, render) makes of the
// enabled libraries, for every combination that includes base, and that turning a
// library off removes its watched resources.
func TestConfigIsTheLibraryMerge(t *testing.T) {
	t.Parallel()
	all, err := config.MergeFiles(libraryFiles(true, true, true)...)
	if err != nil {
		t.Fatal(err)
	}
	allWatched, _ := field(all, "spec", "watchedResources").(map[string]any)
	for _, c := range []struct{ ingress, gateway bool }{{true, true}, {true, false}, {false, true}, {false, false}} {
		t.Run(fmt.Sprintf("ingress=%v,gateway=%v", c.ingress, c.gateway), func(t *testing.T) {
			r := renderChart(t, libs(true, c.ingress, c.gateway), nil)
			got := r.one(t, v1alpha1.KindHAProxyTemplateConfig)
			want, err := config.MergeFiles(libraryFiles(true, c.ingress, c.gateway)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, part := range libraryParts {
				g, w := field(got, "spec", part), field(want, "spec", part)
				if !equal(t, g, w) {
					t.Errorf("spec.%s differs from config.MergeFiles of the libraries%s", part, diffKeys(t, g, w))
				}
			}
			if v := field(got, "spec", "validationTests"); v != nil {
				t.Error("spec.validationTests is in the rendered config; the chart drops it")
			}
			if _, err := config.Decode("rendered", got); err != nil {
				t.Fatalf("the rendered config is not valid: %v", err)
			}
			// A library that is off leaves none of its watched resources behind.
			watched, _ := field(got, "spec", "watchedResources").(map[string]any)
			only := func(lib string) []string {
				own, err := config.MergeFiles(filepath.Join(libraryDir, lib+".yaml"))
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for n := range field(own, "spec", "watchedResources").(map[string]any) {
					names = append(names, n)
				}
				return names
			}
			ingressNames, gatewayNames := only("ingress"), only("gateway")
			for n := range allWatched {
				wantIt := (c.ingress && slices.Contains(ingressNames, n)) || (c.gateway && slices.Contains(gatewayNames, n))
				if _, has := watched[n]; has != wantIt {
					t.Errorf("watchedResources.%s present=%v, want %v", n, has, wantIt)
				}
			}
			if has := len(r.find(t, "IngressClass")) == 1; has != c.ingress {
				t.Errorf("IngressClass rendered=%v, want %v", has, c.ingress)
			}
			if has := len(r.find(t, "GatewayClass")) == 1; has != c.gateway {
				t.Errorf("GatewayClass rendered=%v, want %v", has, c.gateway)
			}
		})
	}
	t.Run("no library", func(t *testing.T) {
		if _, err := tryRender(t, libs(false, false, false), nil); err == nil || !strings.Contains(err.Error(), "enable at least one library") {
			t.Fatalf("want an error naming the missing libraries, got %v", err)
		}
	})
}

// diffKeys names the top-level keys where two maps differ (a short hint for a
// failure; the values are too big to print).
func diffKeys(t *testing.T, a, b any) string {
	am, _ := normalize(t, a).(map[string]any)
	bm, _ := normalize(t, b).(map[string]any)
	if am == nil || bm == nil {
		return fmt.Sprintf(": %T vs %T", a, b)
	}
	var keys []string
	for k, v := range am {
		if !equal(t, v, bm[k]) {
			keys = append(keys, k)
		}
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return " at " + strings.Join(keys, ", ")
}

// TestConfigOverlay checks the deployment's part of the config: it points at this
// release's HAProxy pods, credentials and Deployment, carries the dataplane settings
// and extraContext from values, and controller.config.spec merges last.
func TestConfigOverlay(t *testing.T) {
	t.Parallel()
	r := renderChart(t, nil, nil)
	cfg := r.one(t, v1alpha1.KindHAProxyTemplateConfig)
	if n := field(cfg, "metadata", "name"); n != "haptic-config" {
		t.Errorf("metadata.name = %v", n)
	}
	haproxy := r.named(t, "Deployment", "haptic-haproxy")
	podLabels := field(haproxy, "spec", "template", "metadata", "labels").(map[string]any)
	selector := field(cfg, "spec", "podSelector", "matchLabels").(map[string]any)
	if !equal(t, selector, field(haproxy, "spec", "selector", "matchLabels")) {
		t.Errorf("podSelector %v is not the HAProxy Deployment's selector", selector)
	}
	for k, v := range selector {
		if podLabels[k] != v {
			t.Errorf("HAProxy pods lack podSelector label %s=%v", k, v)
		}
	}
	secret := credentialsSecret(t, r)
	if ref := field(cfg, "spec", "credentialsSecretRef", "name"); ref != field(secret, "metadata", "name") {
		t.Errorf("credentialsSecretRef %v is not the rendered Secret %v", ref, field(secret, "metadata", "name"))
	}
	for path, want := range map[string]any{
		"gateways.provisioning":                        "PerGateway",
		"gateways.deploymentName":                      "haptic-haproxy",
		"dataplane.minDeploymentInterval":              "5s",
		"dataplane.port":                               float64(5555),
		"logging.level":                                "info",
		"templatingSettings.extraContext.ingressClass": "haptic",
		"templatingSettings.extraContext.httpPort":     float64(8080),
	} {
		if got := field(normalize(t, cfg), append([]string{"spec"}, splitPath(path)...)...); got != want {
			t.Errorf("spec.%s = %v, want %v", path, got, want)
		}
	}
	if v := field(cfg, "spec", "templatingSettings", "extraContext", "nbthread"); v != nil {
		t.Errorf("extraContext.nbthread = %v without a CPU limit, want unset", v)
	}
	if field(r.one(t, "IngressClass"), "metadata", "name") != "haptic" {
		t.Error("the IngressClass is not the config's extraContext.ingressClass")
	}

	t.Run("values", func(t *testing.T) {
		r := renderChart(t, map[string]any{
			"controller": map[string]any{
				"templateLibraries": map[string]any{"gateway": map[string]any{"experimentalChannel": true}},
				"config": map[string]any{
					"name":      "other",
					"dataplane": map[string]any{"minDeploymentInterval": "9s"},
					"templatingSettings": map[string]any{"extraContext": map[string]any{
						"hardStopAfter": "30s", "ingressClass": "edge", "maxconn": 50000,
					}},
					"spec": map[string]any{
						"watchedResources": map[string]any{
							"ingresses": map[string]any{"fieldSelector": "metadata.namespace=production"},
							"configmaps": map[string]any{"apiVersion": "v1", "resources": "configmaps",
								"indexBy": []any{"metadata.namespace", "metadata.name"}},
						},
					},
				},
			},
			"haproxy": map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "2500m"}}},
		}, nil)
		cfg := r.one(t, v1alpha1.KindHAProxyTemplateConfig)
		if n := field(cfg, "metadata", "name"); n != "other" {
			t.Errorf("metadata.name = %v", n)
		}
		extra := normalize(t, field(cfg, "spec", "templatingSettings", "extraContext")).(map[string]any)
		for k, want := range map[string]any{"hardStopAfter": "30s", "ingressClass": "edge", "maxconn": float64(50000),
			"nbthread": float64(3), "experimentalChannel": true} {
			if extra[k] != want {
				t.Errorf("extraContext.%s = %v, want %v", k, extra[k], want)
			}
		}
		if v := field(cfg, "spec", "dataplane", "minDeploymentInterval"); v != "9s" {
			t.Errorf("minDeploymentInterval = %v", v)
		}
		// controller.config.spec merges as config.Merge merges an overlay file.
		want, err := config.MergeFiles(libraryFiles(true, true, true)...)
		if err != nil {
			t.Fatal(err)
		}
		overlay := map[string]any{"spec": copyValues(t, map[string]any{"watchedResources": map[string]any{
			"ingresses": map[string]any{"fieldSelector": "metadata.namespace=production"},
			"configmaps": map[string]any{"apiVersion": "v1", "resources": "configmaps",
				"indexBy": []any{"metadata.namespace", "metadata.name"}},
		}})}
		want = config.Merge(want, overlay)
		if !equal(t, field(cfg, "spec", "watchedResources"), field(want, "spec", "watchedResources")) {
			t.Error("controller.config.spec.watchedResources did not merge as config.Merge does")
		}
		if _, err := config.Decode("rendered", cfg); err != nil {
			t.Fatal(err)
		}
		if got := r.named(t, "ConfigMap", "haptic-haproxy-bootstrap"); !strings.Contains(field(got, "data", "haproxy.cfg").(string), "hard-stop-after 30s") {
			t.Error("the bootstrap config does not use extraContext.hardStopAfter")
		}
		if !covers(rulesOf(t, r.one(t, "ClusterRole")), "", "configmaps", "get", "list", "watch") {
			t.Error("the ClusterRole does not cover a watched resource added through controller.config.spec")
		}
	})
}

func splitPath(p string) []string { return strings.Split(p, ".") }

// rulesOf decodes the rules of a ClusterRole or Role.
func rulesOf(t *testing.T, obj map[string]any) []rbacv1.PolicyRule {
	t.Helper()
	data, err := json.Marshal(obj["rules"])
	if err != nil {
		t.Fatal(err)
	}
	var rules []rbacv1.PolicyRule
	if err := json.Unmarshal(data, &rules); err != nil {
		t.Fatal(err)
	}
	return rules
}

// covers reports whether the rules grant every verb on group/resource (for any
// object name).
func covers(rules []rbacv1.PolicyRule, group, resource string, verbs ...string) bool {
	for _, verb := range verbs {
		ok := false
		for _, r := range rules {
			if len(r.ResourceNames) > 0 {
				continue
			}
			if (slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")) &&
				(slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) &&
				(slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*")) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// TestRBAC checks that the ClusterRole grants get/list/watch on everything the
// default config watches (derived from the merged libraries' watchedResources), the
// status the controller writes, and that the Role grants its namespaced work.
func TestRBAC(t *testing.T) {
	t.Parallel()
	r := renderChart(t, nil, nil)
	cluster := rulesOf(t, r.one(t, "ClusterRole"))
	merged, err := config.MergeFiles(libraryFiles(true, true, true)...)
	if err != nil {
		t.Fatal(err)
	}
	watched := field(merged, "spec", "watchedResources").(map[string]any)
	if len(watched) == 0 {
		t.Fatal("the default libraries watch nothing?")
	}
	for name, w := range watched {
		apiVersion, _ := field(w, "apiVersion").(string)
		resource, _ := field(w, "resources").(string)
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			t.Fatalf("watchedResources.%s: %v", name, err)
		}
		if !covers(cluster, gv.Group, resource, "get", "list", "watch") {
			t.Errorf("watchedResources.%s (%s %s): the ClusterRole lacks get/list/watch", name, apiVersion, resource)
		}
	}
	for _, c := range []struct {
		group, resource string
		verbs           []string
	}{
		{"networking.k8s.io", "ingresses/status", []string{"get", "update"}},
		{"gateway.networking.k8s.io", "gatewayclasses/status", []string{"get", "update"}},
		{"gateway.networking.k8s.io", "gateways/status", []string{"get", "update"}},
		{"gateway.networking.k8s.io", "httproutes/status", []string{"get", "update"}},
		{"gateway.networking.k8s.io", "grpcroutes/status", []string{"get", "update"}},
		{"gateway.networking.k8s.io", "tlsroutes/status", []string{"get", "update"}},
		{"", "events", []string{"create", "patch"}},
		{"", "services", []string{"get", "create", "update"}},
		{"discovery.k8s.io", "endpointslices", []string{"get", "create", "update"}},
	} {
		if !covers(cluster, c.group, c.resource, c.verbs...) {
			t.Errorf("ClusterRole lacks %v on %s/%s", c.verbs, c.group, c.resource)
		}
	}
	role := rulesOf(t, r.one(t, "Role"))
	for _, c := range []struct {
		group, resource string
		verbs           []string
	}{
		{v1alpha1.GroupVersion.Group, "haproxytemplateconfigs", []string{"get", "list", "watch"}},
		{v1alpha1.GroupVersion.Group, "haproxytemplateconfigs/status", []string{"get", "update"}},
		{v1alpha1.GroupVersion.Group, "haproxycfgs", []string{"get", "create", "update"}},
		{v1alpha1.GroupVersion.Group, "haproxycfgs/status", []string{"update"}},
		{"", "pods", []string{"get", "list", "watch"}},
		{"apps", "deployments", []string{"get", "list", "create", "delete"}},
		{"coordination.k8s.io", "leases", []string{"get", "create", "update"}},
	} {
		if !covers(role, c.group, c.resource, c.verbs...) {
			t.Errorf("Role lacks %v on %s/%s", c.verbs, c.group, c.resource)
		}
	}
	// Both bindings bind the controller's ServiceAccount.
	sa := field(r.one(t, "ServiceAccount"), "metadata", "name")
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		b := r.one(t, kind)
		subjects, _ := b["subjects"].([]any)
		if len(subjects) != 1 || field(subjects[0], "name") != sa || field(subjects[0], "namespace") != releaseNamespace {
			t.Errorf("%s subjects %v, want the ServiceAccount %v", kind, subjects, sa)
		}
	}
	controller := r.named(t, "Deployment", "haptic-controller")
	if got := field(controller, "spec", "template", "spec", "serviceAccountName"); got != sa {
		t.Errorf("controller runs as %v, want %v", got, sa)
	}
}

// TestControllerDeployment checks args, probes, metrics port and the resources of
// the performance guide (cpu request 100m, no CPU limit, memory 512Mi both ways).
func TestControllerDeployment(t *testing.T) {
	t.Parallel()
	r := renderChart(t, map[string]any{"controller": map[string]any{
		"extraEnv": []any{map[string]any{"name": "AUTOMEMLIMIT", "value": "0.8"}},
	}}, nil)
	d := r.named(t, "Deployment", "haptic-controller")
	c := containers(t, d)[0]
	args := stringList(c["args"])
	for _, want := range []string{"run", "--namespace=" + releaseNamespace, "--config-name=haptic-config", "--metrics-addr=$(POD_IP):9090"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	if args[0] != "run" {
		t.Errorf("args %v: want run first", args)
	}
	for _, probe := range []string{"readinessProbe", "livenessProbe"} {
		if p := field(c, probe, "httpGet", "path"); p != "/healthz" {
			t.Errorf("%s path %v", probe, p)
		}
	}
	res := normalize(t, c["resources"])
	for path, want := range map[string]any{"requests.cpu": "100m", "requests.memory": "512Mi", "limits.memory": "512Mi", "limits.cpu": nil} {
		if got := field(res, splitPath(path)...); got != want {
			t.Errorf("resources.%s = %v, want %v", path, got, want)
		}
	}
	env, _ := c["env"].([]any)
	if !slices.ContainsFunc(env, func(e any) bool { return field(e, "name") == "AUTOMEMLIMIT" && field(e, "value") == "0.8" }) {
		t.Errorf("controller.extraEnv not injected: %v", env)
	}
	if img, _ := c["image"].(string); img != "ghcr.io/haproxy-haptic/haptic:"+loadChart(t).Metadata.AppVersion {
		t.Errorf("image %q", img)
	}
}

// TestHAProxyDeployment checks the HAProxy pods: replicas, the agent's flags, the
// credentials and bootstrap volumes, and nbthread and hard-stop-after derivation.
func TestHAProxyDeployment(t *testing.T) {
	t.Parallel()
	r := renderChart(t, map[string]any{"haproxy": map[string]any{"replicas": 4}}, nil)
	d := r.named(t, "Deployment", "haptic-haproxy")
	if n := normalize(t, field(d, "spec", "replicas")); n != float64(4) {
		t.Errorf("replicas %v", n)
	}
	c := containers(t, d)
	if len(c) != 2 || c[0]["name"] != "haproxy" || c[1]["name"] != "agent" {
		t.Fatalf("want two containers, haproxy and agent, got %d", len(c))
	}
	args := stringList(c[1]["args"])
	for _, want := range []string{"--external-haproxy", "--listen=$(POD_IP):5555", "--credentials-file=/etc/haptic-agent/credentials/credentials",
		"--bootstrap-config=/etc/haptic-agent/bootstrap/haproxy.cfg", "--status-address=$(POD_IP)"} {
		if !slices.Contains(args, want) {
			t.Errorf("agent args %v lack %s", args, want)
		}
	}
	volumes, _ := field(d, "spec", "template", "spec", "volumes").([]any)
	secretName := field(credentialsSecret(t, r), "metadata", "name")
	if !slices.ContainsFunc(volumes, func(v any) bool { return field(v, "secret", "secretName") == secretName }) {
		t.Errorf("no volume of the credentials Secret %v", secretName)
	}
	boot := field(r.named(t, "ConfigMap", "haptic-haproxy-bootstrap"), "data", "haproxy.cfg").(string)
	for _, want := range []string{"hard-stop-after 10s", `bind "${POD_IP}:8404"`, "/healthz"} {
		if !strings.Contains(boot, want) {
			t.Errorf("bootstrap config lacks %q:\n%s", want, boot)
		}
	}

	nbthread := func(t *testing.T, haproxy map[string]any) any {
		r := renderChart(t, map[string]any{"haproxy": haproxy}, nil)
		return normalize(t, field(r.one(t, v1alpha1.KindHAProxyTemplateConfig), "spec", "templatingSettings", "extraContext", "nbthread"))
	}
	for _, c := range []struct {
		name   string
		values map[string]any
		want   any
	}{
		{"no limit", map[string]any{}, nil},
		{"1500m", map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "1500m"}}}, float64(2)},
		{"4", map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": 4}}}, float64(4)},
		{"0.5", map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "0.5"}}}, float64(1)},
		{"pinned", map[string]any{"nbthread": 6, "resources": map[string]any{"limits": map[string]any{"cpu": 2}}}, float64(6)},
		{"forced off", map[string]any{"nbthread": 0, "resources": map[string]any{"limits": map[string]any{"cpu": 2}}}, float64(0)},
	} {
		t.Run("nbthread "+c.name, func(t *testing.T) {
			if got := nbthread(t, c.values); got != c.want {
				t.Errorf("nbthread = %v, want %v", got, c.want)
			}
		})
	}
	t.Run("hardStopAfter off", func(t *testing.T) {
		r := renderChart(t, map[string]any{"controller": map[string]any{"config": map[string]any{
			"templatingSettings": map[string]any{"extraContext": map[string]any{"hardStopAfter": ""}}}}}, nil)
		boot := field(r.named(t, "ConfigMap", "haptic-haproxy-bootstrap"), "data", "haproxy.cfg").(string)
		if strings.Contains(boot, "hard-stop-after") {
			t.Errorf("hardStopAfter \"\" keeps hard-stop-after:\n%s", boot)
		}
	})
	t.Run("initialConfig", func(t *testing.T) {
		r := renderChart(t, map[string]any{"haproxy": map[string]any{"initialConfig": "global\n    maxconn 10\n"}}, nil)
		boot := field(r.named(t, "ConfigMap", "haptic-haproxy-bootstrap"), "data", "haproxy.cfg").(string)
		if strings.TrimSpace(boot) != "global\n    maxconn 10" {
			t.Errorf("initialConfig not used verbatim:\n%q", boot)
		}
	})
}
