package chart

import (
	"encoding/base64"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
)

// credentialSecrets are the rendered Secrets other than the webhook's TLS Secret.
func credentialSecrets(t *testing.T, r *rendered) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, o := range r.find(t, "Secret") {
		if o.obj["type"] != "kubernetes.io/tls" {
			out = append(out, o.obj)
		}
	}
	return out
}

// credentialsSecret is the agent credentials Secret.
func credentialsSecret(t *testing.T, r *rendered) map[string]any {
	t.Helper()
	s := credentialSecrets(t, r)
	if len(s) != 1 {
		t.Fatalf("want one credentials Secret, got %d", len(s))
	}
	return s[0]
}

// secretValues decodes the rendered credentials Secret.
func secretValues(t *testing.T, r *rendered) (user, pass, creds string) {
	t.Helper()
	s := credentialsSecret(t, r)
	dec := func(k string) string {
		v, _ := field(s, "data", k).(string)
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			t.Fatalf("data.%s: %v", k, err)
		}
		return string(b)
	}
	return dec("username"), dec("password"), dec("credentials")
}

// TestAgentCredentials checks the generated Secret (username, a random password,
// credentials = username:password), that an upgrade keeps the live one (lookup),
// that an existing Secret replaces it, and that no secret value is in NOTES.txt or
// any other manifest.
func TestAgentCredentials(t *testing.T) {
	t.Parallel()
	r := renderChart(t, nil, nil)
	user, pass, creds := secretValues(t, r)
	if user != "haptic" || len(pass) < 32 || creds != user+":"+pass {
		t.Errorf("generated credentials: user %q, password of %d characters, credentials consistent=%v", user, len(pass), creds == user+":"+pass)
	}
	if _, pass2, _ := secretValues(t, renderChart(t, nil, nil)); pass2 == pass {
		t.Error("two installs got the same password")
	}
	if r.notes == "" {
		t.Fatal("no NOTES.txt rendered")
	}
	secrets := []string{pass, creds, base64.StdEncoding.EncodeToString([]byte(pass)), base64.StdEncoding.EncodeToString([]byte(creds))}
	for _, s := range secrets {
		if strings.Contains(r.notes, s) {
			t.Error("NOTES.txt holds a secret value")
		}
		for name, text := range r.files {
			if name != "haptic/templates/agent-credentials-secret.yaml" && strings.Contains(text, s) {
				t.Errorf("%s holds a secret value", name)
			}
		}
	}

	t.Run("upgrade keeps the live Secret", func(t *testing.T) {
		b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
		var asked []string
		lookup := func(apiVersion, kind, ns, name string) (map[string]any, error) {
			asked = append(asked, strings.Join([]string{apiVersion, kind, ns, name}, " "))
			if apiVersion == "v1" && kind == "Secret" && ns == releaseNamespace && name == "haptic-agent-credentials" {
				return map[string]any{"apiVersion": "v1", "kind": "Secret", "data": map[string]any{
					"username": b64("admin"), "password": b64("kept-password-123"), "credentials": b64("admin:kept-password-123"),
				}}, nil
			}
			return map[string]any{}, nil
		}
		r := renderChart(t, nil, lookup)
		user, pass, creds := secretValues(t, r)
		if user != "admin" || pass != "kept-password-123" || creds != "admin:kept-password-123" {
			t.Errorf("upgrade regenerated the credentials (asked %v)", asked)
		}
		if strings.Contains(r.notes, "kept-password-123") {
			t.Error("NOTES.txt holds the password")
		}
	})

	t.Run("existing Secret", func(t *testing.T) {
		r := renderChart(t, valueSets["existing"], nil)
		if n := len(credentialSecrets(t, r)); n != 0 {
			t.Errorf("%d Secrets rendered with existingSecret", n)
		}
		cfg := r.one(t, v1alpha1.KindHAProxyTemplateConfig)
		if ref := field(cfg, "spec", "credentialsSecretRef", "name"); ref != "mine" {
			t.Errorf("credentialsSecretRef %v", ref)
		}
		volumes, _ := field(r.named(t, "Deployment", "haptic-haproxy"), "spec", "template", "spec", "volumes").([]any)
		if !slices.ContainsFunc(volumes, func(v any) bool { return field(v, "secret", "secretName") == "mine" }) {
			t.Error("the HAProxy pods do not mount the existing Secret")
		}
	})
}

// TestClasses checks the IngressClass and GatewayClass controller names.
func TestClasses(t *testing.T) {
	t.Parallel()
	r := renderChart(t, nil, nil)
	if c := field(r.one(t, "IngressClass"), "spec", "controller"); c != "haproxy-haptic.org/controller" {
		t.Errorf("IngressClass controller %v", c)
	}
	gc := r.one(t, "GatewayClass")
	if c := field(gc, "spec", "controllerName"); c != "haproxy-haptic.org/controller" {
		t.Errorf("GatewayClass controllerName %v", c)
	}
	if field(gc, "metadata", "name") != "haptic" {
		t.Errorf("GatewayClass name %v", field(gc, "metadata", "name"))
	}
	r = renderChart(t, valueSets["full options"], nil)
	if a := field(r.one(t, "IngressClass"), "metadata", "annotations", "ingressclass.kubernetes.io/is-default-class"); a != "true" {
		t.Errorf("default IngressClass annotation %v", a)
	}
}

// TestLint runs Helm's linter (helm lint) on the chart: no warnings or errors.
func TestLint(t *testing.T) {
	t.Parallel()
	for name, vals := range map[string]map[string]any{"defaults": nil, "full options": fullOptions()} {
		t.Run(name, func(t *testing.T) {
			res := lint.RunAll(chartDir, copyValues(t, vals), releaseNamespace)
			for _, m := range res.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("lint: %s", m)
				} else {
					t.Logf("lint: %s", m)
				}
			}
		})
	}
}

// TestNoHelmInBinaries keeps Helm a test-only dependency: no command imports it.
func TestNoHelmInBinaries(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("go list in -short mode")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/haproxy-haptic/haptic/cmd/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "helm.sh/") || dep == "github.com/haproxy-haptic/haptic/internal/chart" {
			t.Errorf("a command imports %s", dep)
		}
	}
}
