package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// echoPod is the pod name echo-basic reports.
func echoPod(body string) string {
	var r struct {
		Pod string `json:"pod"`
	}
	_ = json.Unmarshal([]byte(body), &r)
	return r.Pod
}

// TestLivePipeline covers the live pipeline end to end: an Ingress routes through
// every HAProxy pod, path changes move the route, deletion gives 404, backend scaling
// loses no request, a late HAProxy pod gets the config at once, a broken template
// deploys nothing, and debouncing shows in the counters.
func TestLivePipeline(t *testing.T) {
	e := setup(t, 2)
	var pods map[string]string
	e.eventually("two ready HAProxy pods", 90*time.Second, func() (bool, string) {
		pods = e.haproxyPods()
		return len(pods) == 2, fmt.Sprint(pods)
	})

	t.Run("ingress routes through every HAProxy pod", func(t *testing.T) {
		for name, ip := range pods {
			e.eventually("200 from echo via "+name, 90*time.Second, func() (bool, string) {
				code, body, err := e.get(ip, echoHost, "/")
				return code == 200 && strings.HasPrefix(echoPod(body), "echo-"), fmt.Sprint(code, err, body)
			})
		}
		code, _, _ := e.get(pods[firstKey(pods)], "other.localhost", "/")
		if code != 404 {
			t.Fatalf("an unknown host answered %d, want 404", code)
		}
	})

	t.Run("changing the path moves the route", func(t *testing.T) {
		// Endpoint changes of the echo pods' start may still wait for a paced reload,
		// which would carry the path change with it.
		for _, ip := range pods {
			e.settle(ip)
		}
		runtimeApplies := e.metric("haptic_deploy_apply_total", `mode="runtime",result="success"`)
		e.patchIngress(`{"spec":{"rules":[{"host":"echo.localhost","http":{"paths":[{"path":"/v2","pathType":"Prefix","backend":{"service":{"name":"echo","port":{"name":"http"}}}}]}}]}}`)
		for _, ip := range pods {
			e.eventually("route moved", 30*time.Second, func() (bool, string) {
				newCode, _, _ := e.get(ip, echoHost, "/v2/x")
				oldCode, _, _ := e.get(ip, echoHost, "/")
				return newCode == 200 && oldCode == 404, fmt.Sprint(newCode, oldCode)
			})
		}
		// Only the prefix map changed: plan sends it as runtime map operations.
		if got := e.metric("haptic_deploy_apply_total", `mode="runtime",result="success"`); got < runtimeApplies+1 {
			t.Fatalf("a path change must be applied at runtime: runtime applies %v → %v", runtimeApplies, got)
		}
		e.patchIngress(`{"spec":{"rules":[{"host":"echo.localhost","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"echo","port":{"name":"http"}}}}]}}]}}`)
		for _, ip := range pods {
			e.eventually("route back", 30*time.Second, func() (bool, string) {
				code, _, _ := e.get(ip, echoHost, "/")
				return code == 200, fmt.Sprint(code)
			})
		}
	})

	t.Run("scaling the backend under load loses no request", func(t *testing.T) {
		ip := pods[firstKey(pods)]
		var sent, failed atomic.Int64
		var mu sync.Mutex
		var failures []string
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // bounded: at most 3000 requests and until stop
			defer wg.Done()
			for range 3000 {
				select {
				case <-stop:
					return
				default:
				}
				sent.Add(1)
				code, body, err := e.get(ip, echoHost, "/")
				if err != nil || code != 200 {
					failed.Add(1)
					mu.Lock()
					failures = append(failures, fmt.Sprint(code, err, body))
					mu.Unlock()
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		for _, n := range []int{5, 1} {
			e.kubectl("scale", "deployment/echo", fmt.Sprintf("--replicas=%d", n))
			e.eventually(fmt.Sprintf("%d echo endpoints served", n), 90*time.Second, func() (bool, string) {
				seen := map[string]bool{}
				for range 4 * n {
					_, body, _ := e.get(ip, echoHost, "/")
					seen[echoPod(body)] = true
				}
				return len(seen) == n && e.readyEchoPods() == n, fmt.Sprint(seen)
			})
			time.Sleep(3 * time.Second) // let terminating pods finish under load
		}
		close(stop)
		wg.Wait()
		if failed.Load() > 0 {
			t.Fatalf("%d of %d requests failed while scaling 2→5→1: %v", failed.Load(), sent.Load(), failures)
		}
		t.Logf("%d requests, 0 failed, while scaling 2→5→1", sent.Load())
	})

	t.Run("a third HAProxy pod gets the current config at once", func(t *testing.T) {
		e.kubectl("scale", "deployment/haproxy", "--replicas=3")
		var all map[string]string
		e.eventually("three ready HAProxy pods", 90*time.Second, func() (bool, string) {
			all = e.haproxyPods()
			return len(all) == 3, fmt.Sprint(all)
		})
		for name, ip := range all {
			e.eventually("route on "+name, 30*time.Second, func() (bool, string) {
				code, _, err := e.get(ip, echoHost, "/")
				return code == 200, fmt.Sprint(code, err)
			})
		}
	})

	t.Run("a broken template deploys nothing and status says why", func(t *testing.T) {
		before := e.metric("haptic_reconciliation_total", `result="success"`)
		e.kubectl("patch", "haproxytemplateconfig/haptic-config", "--type=merge", "-p",
			`{"spec":{"templateSnippets":{"backends-ingress":{"template":"{% if %}broken\n"}}}}`)
		e.eventually("Invalid status", 30*time.Second, func() (bool, string) {
			out := e.kubectl("get", "haproxytemplateconfig/haptic-config", "-o", "jsonpath={.status.validationStatus} {.status.validationMessage}")
			return strings.HasPrefix(out, "Invalid") && strings.Contains(out, "backends-ingress"), out
		})
		e.eventually("a Kubernetes Event naming the template", 30*time.Second, func() (bool, string) {
			out := e.kubectl("get", "events", "--field-selector", "reason=InvalidConfig", "-o", "jsonpath={.items[*].message}")
			return strings.Contains(out, "snippet backends-ingress:1"), out
		})
		for _, ip := range pods {
			if code, _, err := e.get(ip, echoHost, "/"); code != 200 {
				t.Fatalf("the previous config must keep serving: %d %v", code, err)
			}
		}
		if after := e.metric("haptic_reconciliation_total", `result="success"`); after != before {
			t.Fatalf("an invalid config must not reconcile: %v → %v", before, after)
		}
	})

	t.Run("ingress deletion gives 404", func(t *testing.T) {
		e.kubectl("delete", "ingress/echo")
		for _, ip := range pods {
			e.eventually("404 after delete", 30*time.Second, func() (bool, string) {
				code, _, _ := e.get(ip, echoHost, "/")
				return code == 404, fmt.Sprint(code)
			})
		}
	})
}

func (e *env) patchIngress(patch string) {
	e.t.Helper()
	if _, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Patch(e.ctx, "echo", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		e.t.Fatalf("patch ingress: %v", err)
	}
}

func (e *env) readyEchoPods() int {
	pods, err := e.c.Client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app=echo"})
	if err != nil {
		return -1
	}
	n := 0
	for i := range pods.Items {
		if pods.Items[i].DeletionTimestamp == nil && ready(&pods.Items[i]) {
			n++
		}
	}
	return n
}

func firstKey(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys[0]
}
