package resilience

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/localcluster/cluster"
)

// apiServerAway is how long case 2 keeps the API server stopped.
const apiServerAway = 30 * time.Second

// TestAPIServerAway is case 2: two controller replicas; the API server is stopped
// for 30 s (etcd, the node and the pods keep running) and started again. HAProxy
// serves throughout (0 failed requests); the controllers' watches fail and are
// listed again (haptic_watch_restarts_total); the leader, which lost the Lease
// while the API server was away, campaigns again in its process; a route created
// right after the return is served, and its Ingress gets its status, within 5 s.
//
// The API server is the cluster's: every test using the cluster meanwhile loses
// it too, so the suite runs alone (`make test-resilience`, -p 1).
func TestAPIServerAway(t *testing.T) {
	e := setup(t)
	metrics := []string{"127.0.0.1:19301", "127.0.0.1:19302"}
	e.startControllerWithMetrics("replica-a", metrics[0])
	e.startControllerWithMetrics("replica-b", metrics[1])
	_, ip := e.haproxyPod()
	e.eventually("echo served", 120*time.Second, func() (bool, string) {
		code, err := get(e.ctx, e.http, ip, echoHost)
		return code == 200, fmt.Sprint(code, err)
	})
	e.settle(ip)
	before := e.agentState(ip)
	restartsBefore := e.watchRestarts(metrics)

	l := e.startLoad(ip, apiServerAway+2*time.Minute)
	time.Sleep(2 * time.Second)
	stopping := time.Now()
	if err := cluster.StopAPIServer(e.c.Config, 0); err != nil { // a crash: every watch is reset
		t.Fatal(err)
	}
	stopped := time.Now()
	t.Cleanup(func() {
		if err := cluster.StartAPIServer(e.ctx, e.c.Config); err != nil {
			t.Errorf("start the API server again: %v", err)
		}
	})
	t.Logf("API server stopped (took %s); back in %s", stopped.Sub(stopping).Round(10*time.Millisecond), apiServerAway)
	time.Sleep(apiServerAway - time.Since(stopping))
	if err := cluster.StartAPIServer(e.ctx, e.c.Config); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	t.Cleanup(e.awaitControllerManager)
	t.Logf("API server ready again after %s away", back.Sub(stopping).Round(10*time.Millisecond))

	// A new Ingress to the echo Service, which has endpoints: a new Service would
	// also wait for kube-controller-manager to write its EndpointSlice, and its
	// watches back off (up to 30 s) after the API server's absence.
	e.createIngress("after-outage", "after-outage.localhost", "echo")
	changed := time.Now()
	var served, statused time.Duration
	e.eventually("the route created after the return is served and has its status", 60*time.Second, func() (bool, string) {
		if served == 0 {
			if code, _ := get(e.ctx, e.http, ip, "after-outage.localhost"); code == 200 {
				served = time.Since(changed)
			}
		}
		if statused == 0 {
			ing, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Get(e.ctx, "after-outage", metav1.GetOptions{})
			if err == nil && len(ing.Status.LoadBalancer.Ingress) == 1 && ing.Status.LoadBalancer.Ingress[0].IP == ip {
				statused = time.Since(changed)
			}
		}
		return served > 0 && statused > 0, fmt.Sprintf("served after %s, status after %s", served, statused)
	})
	time.Sleep(2 * time.Second)
	requests, failed, firstErr := l.stop()
	after := e.agentState(ip)
	restarts := e.watchRestarts(metrics) - restartsBefore
	reloads := after.Reloads - before.Reloads
	report(row{name: fmt.Sprintf("2 API server stopped for %s", apiServerAway), requests: requests, failed: failed,
		convergence: max(served, statused), reloads: reloads,
		note: fmt.Sprintf("route served %s, status %s after the change (created %s after the return); watch restarts %d; %s",
			served.Round(10*time.Millisecond), statused.Round(10*time.Millisecond), changed.Sub(back).Round(10*time.Millisecond), restarts, firstErr)})
	if failed > 0 {
		t.Errorf("%d of %d requests failed (first: %s)", failed, requests, firstErr)
	}
	if served > 5*time.Second {
		t.Errorf("the route created after the return was served after %s, want within 5 s", served)
	}
	if statused > 5*time.Second {
		t.Errorf("the Ingress created after the return got its status after %s, want within 5 s", statused)
	}
	if restarts == 0 {
		t.Error("haptic_watch_restarts_total did not move: the lost watches went unnoticed")
	}
	if requests == 0 {
		t.Error("no requests were sent")
	}
}

// watchRestarts sums haptic_watch_restarts_total over the replicas' /metrics.
func (e *env) watchRestarts(addrs []string) int {
	e.t.Helper()
	total := 0
	for _, addr := range addrs {
		var n int
		e.eventually("metrics of "+addr, 30*time.Second, func() (bool, string) {
			var err error
			n, err = scrapeCounter(e.http, "http://"+addr+"/metrics", "haptic_watch_restarts_total")
			return err == nil, fmt.Sprint(err)
		})
		total += n
	}
	return total
}

// scrapeCounter sums every series of the counter name in a Prometheus text scrape.
func scrapeCounter(client *http.Client, url, name string) (int, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", url, resp.Status)
	}
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", line, err)
		}
		total += v
	}
	return int(total), sc.Err()
}

// awaitControllerManager waits until kube-controller-manager works again after the
// API server's absence — its reflectors back off for up to 30 s — by creating a
// namespace and waiting for its default ServiceAccount, so the next case starts on
// a cluster that creates namespaces as usual.
func (e *env) awaitControllerManager() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns, err := e.c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "resilience-after-apiserver-"}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Errorf("create a namespace after the API server's return: %v", err)
		return
	}
	defer func() {
		_ = e.c.Client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	}()
	start := time.Now()
	for {
		if _, err := e.c.Client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			e.t.Logf("kube-controller-manager made a ServiceAccount %s after the checks", time.Since(start).Round(100*time.Millisecond))
			return
		}
		select {
		case <-ctx.Done():
			e.t.Errorf("kube-controller-manager made no ServiceAccount within 2m of the API server's return")
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}
