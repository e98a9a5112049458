package publish

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/controller"
	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

// The controller publishes what it renders: `haptic run` wiring, no HAProxy pods
// needed (the pod selector matches none).
func TestControllerPublishesHAProxyCfg(t *testing.T) {
	const cfgText = "global\n    log stdout format raw local0\n\ndefaults\n    mode http\n    timeout connect 5s\n    timeout client 30s\n    timeout server 30s\n\nfrontend http\n    bind 127.0.0.1:18080\n    http-request return status 200\n"
	ctx, dyn, ns, _, nsObj := setupSpec(t, map[string]any{
		"podSelector":          map[string]any{"matchLabels": map[string]any{"app": "no-such-haproxy"}},
		"credentialsSecretRef": map[string]any{"name": "agent-credentials"},
		"dataplane":            map[string]any{"configPublishInterval": "1s"},
		"haproxyConfig":        map[string]any{"template": cfgText},
		"maps":                 map[string]any{"host.map": map[string]any{"template": "echo.localhost be_echo\n"}},
		"sslCertificates":      map[string]any{"site.pem": map[string]any{"template": secretPEM}},
	})
	_, err := nsObj.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-credentials"},
		StringData: map[string]string{"username": "haptic", "password": "publish-test-password"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	logMu := make(chan struct{}, 1)
	logMu <- struct{}{}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(runCtx, controller.Options{Rest: clustertest.Start(t).REST, Namespace: ns, ConfigName: configName,
			HAProxyBinary: "haproxy", Log: slog.New(slog.NewTextHandler(lockedWriter{&logs, logMu}, nil))})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("controller did not stop")
		}
		if t.Failed() {
			<-logMu
			t.Logf("controller log:\n%s", logs.String())
			logMu <- struct{}{}
		}
	})
	eventually(t, 60*time.Second, "the controller's HAProxyCfg", func() error {
		obj, raw, err := read(ctx, t, dyn, ns)
		if err != nil {
			return err
		}
		if obj.Spec.Checksum == "" || obj.Spec.Config.Content == "" {
			return fmt.Errorf("incomplete: %+v", obj.Spec)
		}
		if !strings.Contains(obj.Spec.Config.Content, "http-request return status 200") {
			t.Fatalf("published config = %q", obj.Spec.Config.Content)
		}
		if strings.Contains(string(raw), "TOP-SECRET") {
			t.Fatal("certificate content reached the API server")
		}
		if len(obj.Spec.Certificates) != 1 || obj.Spec.Certificates[0].Checksum != bundle.HashContent(secretPEM) {
			return fmt.Errorf("certificates = %+v", obj.Spec.Certificates)
		}
		return nil
	})
	<-logMu
	defer func() { logMu <- struct{}{} }()
	if strings.Contains(logs.String(), "TOP-SECRET") {
		t.Fatal("certificate content in the controller's log")
	}
}

type lockedWriter struct {
	w  io.Writer
	mu chan struct{}
}

func (l lockedWriter) Write(p []byte) (int, error) {
	<-l.mu
	defer func() { l.mu <- struct{}{} }()
	return l.w.Write(p)
}
