package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"

	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// pollHTTP GETs url from inside the namespace until it answers 200 or timeout.
// restConfig, when set, supplies TLS and client credentials.
func pollHTTP(ctx context.Context, cfg Config, restConfig *rest.Config, url string, timeout time.Duration) error {
	client, err := namespacedHTTPClient(cfg, restConfig)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		lastErr = getOK(ctx, client, url)
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not ready after %s: %w", url, timeout, lastErr)
}

func namespacedHTTPClient(cfg Config, restConfig *rest.Config) (*http.Client, error) {
	if restConfig == nil {
		return netns.HTTPClient(cfg.Netns, nil, 2*time.Second), nil
	}
	client, err := rest.HTTPClientFor(restConfig)
	if err != nil {
		return nil, fmt.Errorf("http client for API server: %w", err)
	}
	client.Timeout = 2 * time.Second
	return client, nil
}

func getOK(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: %s: %s", url, resp.Status, body)
	}
	return nil
}
