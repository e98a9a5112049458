package clustertest

import (
	"context"
	"io"
	"net/http"
)

// Get sends GET / for host to addr (host:port) with client and returns the status
// once the body is read (a keep-alive client then reuses the connection).
func Get(ctx context.Context, client *http.Client, addr, host string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		return 0, err
	}
	req.Host = host
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
