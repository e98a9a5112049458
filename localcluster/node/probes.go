package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probeTarget is what a probe needs to know about the running container.
type probeTarget struct {
	ip        string // pod IP (or host IP for hostNetwork pods)
	pid       int    // container process, for exec probes
	env       []string
	container *corev1.Container
}

// runProbe executes one probe attempt and returns nil on success.
func runProbe(ctx context.Context, p *corev1.Probe, t probeTarget) error {
	timeout := time.Duration(max(p.TimeoutSeconds, 1)) * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case p.HTTPGet != nil:
		return probeHTTP(ctx, p.HTTPGet, t, timeout)
	case p.TCPSocket != nil:
		port, err := resolvePort(p.TCPSocket.Port, t.container)
		if err != nil {
			return err
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = t.ip
		}
		conn, err := (&net.Dialer{Timeout: timeout}).DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return fmt.Errorf("tcp probe: %w", err)
		}
		return conn.Close()
	case p.Exec != nil:
		// Run inside the container's mount namespace, with its environment.
		args := append([]string{"--target", strconv.Itoa(t.pid), "--mount", "--net", "--"}, p.Exec.Command...)
		cmd := exec.CommandContext(ctx, "nsenter", args...)
		cmd.Env = t.env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("exec probe: %w: %s", err, out)
		}
		return nil
	}
	return nil // gRPC probes are not supported; treat as passing
}

func probeHTTP(ctx context.Context, g *corev1.HTTPGetAction, t probeTarget, timeout time.Duration) error {
	port, err := resolvePort(g.Port, t.container)
	if err != nil {
		return err
	}
	host := g.Host
	if host == "" {
		host = t.ip
	}
	scheme := "http"
	if g.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: g.Path}
	if u.Path == "" {
		u.Path = "/"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("http probe: %w", err)
	}
	for _, h := range g.HTTPHeaders {
		req.Header.Add(h.Name, h.Value)
	}
	client := &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // kubelet does the same for probes
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("http probe: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("http probe %s: %s", u.String(), resp.Status)
	}
	return nil
}

// resolvePort turns a numeric or named port into a number.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, p.StrVal)
}

// probeSettings applies the API defaults a pod created through the API already has.
func probeSettings(p *corev1.Probe) (initial, period time.Duration, success, failure int32) {
	period = time.Duration(p.PeriodSeconds) * time.Second
	if period <= 0 {
		period = 10 * time.Second
	}
	success, failure = max(p.SuccessThreshold, 1), p.FailureThreshold
	if failure <= 0 {
		failure = 3
	}
	return time.Duration(p.InitialDelaySeconds) * time.Second, period, success, failure
}
