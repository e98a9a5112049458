package resilience

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// load runs two bounded loops against HAProxy at ip until stop or its bound: one
// on a keep-alive connection, one opening a new connection per request. A request
// fails on a transport error or a status other than 200.
type load struct {
	requests, failed atomic.Int64
	firstErr         atomic.Value
	cancel           context.CancelFunc
	wg               sync.WaitGroup
}

func (e *env) startLoad(ip string, bound time.Duration) *load {
	ctx, cancel := context.WithTimeout(e.ctx, bound)
	l := &load{cancel: cancel}
	keepAlive := e.c.HTTPClient(5 * time.Second)
	fresh := netns.HTTPClient(e.c.Config.Netns, &http.Transport{DisableKeepAlives: true}, 5*time.Second)
	for _, client := range []*http.Client{keepAlive, fresh} {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for ctx.Err() == nil {
				code, err := get(ctx, client, ip, echoHost)
				if ctx.Err() != nil {
					return // the bound, not a failure
				}
				l.requests.Add(1)
				if err != nil || code != 200 {
					l.failed.Add(1)
					l.firstErr.CompareAndSwap(nil, fmt.Sprint(code, " ", err))
				}
				time.Sleep(5 * time.Millisecond) // bounded rate: ~100/s per loop at most
			}
		}()
	}
	return l
}

// stop ends the loops and returns the counts.
func (l *load) stop() (requests, failed int64, firstErr string) {
	l.cancel()
	l.wg.Wait()
	s, _ := l.firstErr.Load().(string)
	return l.requests.Load(), l.failed.Load(), s
}

// row is one line of the suite's table.
type row struct {
	name             string
	requests, failed int64
	convergence      time.Duration
	reloads          int
	note             string
}

var (
	tableMu sync.Mutex
	table   []row
)

func report(r row) {
	tableMu.Lock()
	defer tableMu.Unlock()
	table = append(table, r)
}

func printTable() {
	tableMu.Lock()
	defer tableMu.Unlock()
	if len(table) == 0 {
		return
	}
	sort.SliceStable(table, func(i, j int) bool { return table[i].name < table[j].name }) // names start with the case number
	fmt.Fprintf(os.Stdout, "\n%-44s %9s %7s %12s %8s  %s\n", "case", "requests", "failed", "convergence", "reloads", "note")
	for _, r := range table {
		fmt.Fprintf(os.Stdout, "%-44s %9d %7d %12s %8d  %s\n", r.name, r.requests, r.failed, r.convergence.Round(10*time.Millisecond), r.reloads, r.note)
	}
}
