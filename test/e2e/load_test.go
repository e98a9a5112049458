package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
)

// underLoad sends requests for host to addr (host:port) from two clients at once,
// one that keeps its connection alive and one that opens a new connection per
// request, while changes runs (after 2 s of load), and fails the test when any
// request gets anything but a 200. Each client is bounded: 25 s and 10,000
// requests, 5 ms apart.
func (e *env) underLoad(addr, host string, changes func()) {
	e.t.Helper()
	keepAlive := e.c.HTTPClient(5 * time.Second)
	fresh := e.c.HTTPClient(5 * time.Second)
	fresh.Transport.(*http.Transport).DisableKeepAlives = true
	ctx, cancel := context.WithTimeout(e.ctx, 25*time.Second)
	defer cancel()
	type load struct {
		name         string
		client       *http.Client
		sent, failed atomic.Int64
		mu           sync.Mutex
		failures     []string
	}
	loads := []*load{{name: "keep-alive", client: keepAlive}, {name: "new-connection", client: fresh}}
	var wg sync.WaitGroup
	for _, l := range loads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10000 {
				if ctx.Err() != nil {
					return
				}
				l.sent.Add(1)
				if code, err := clustertest.Get(ctx, l.client, addr, host); err != nil || code != 200 {
					if ctx.Err() != nil {
						l.sent.Add(-1) // cut by the end of the window, not by HAProxy
						return
					}
					l.failed.Add(1)
					l.mu.Lock()
					l.failures = append(l.failures, fmt.Sprint(code, err))
					l.mu.Unlock()
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	time.Sleep(2 * time.Second)
	changes()
	wg.Wait()
	for _, l := range loads {
		if l.failed.Load() > 0 || l.sent.Load() < 100 {
			e.t.Fatalf("%d of %d %s requests to %s failed: %v", l.failed.Load(), l.sent.Load(), l.name, host, l.failures)
		}
	}
	e.t.Logf("%d keep-alive and %d new-connection requests to %s, 0 failed", loads[0].sent.Load(), loads[1].sent.Load(), host)
}
