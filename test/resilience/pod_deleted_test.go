package resilience

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// TestHAProxyPodDeletedDuringBurst is case 5: two HAProxy pods; during a burst of
// 100 route changes one pod is force-deleted. No request to the surviving pod
// fails, and the replacement pod converges to the latest configuration (the same
// set as the survivor, serving the last route).
func TestHAProxyPodDeletedDuringBurst(t *testing.T) {
	e := setup(t)
	e.kubectl("scale", "deployment/haproxy", "--replicas=2")
	e.startController("replica-a")
	pods := e.readyHAProxyPods(2)
	for _, ip := range pods {
		e.eventually("echo served on "+ip, 120*time.Second, func() (bool, string) {
			code, err := get(e.ctx, e.http, ip, echoHost)
			return code == 200, fmt.Sprint(code, err)
		})
	}
	var victim, survivor, survivorIP string
	for name, ip := range pods {
		if victim == "" {
			victim = name
		} else {
			survivor, survivorIP = name, ip
		}
	}
	e.settle(survivorIP)
	l := e.startLoad(survivorIP, 5*time.Minute)

	// 100 changes to one Ingress: a host rule more each time, routed to echo.
	ing, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Get(e.ctx, "echo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rule := ing.Spec.Rules[0]
	var last string
	for i := range 100 {
		if i == 30 {
			if err := e.c.Client.CoreV1().Pods(e.ns).Delete(e.ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
				t.Fatal(err)
			}
		}
		last = fmt.Sprintf("burst-%d.localhost", i)
		r := *rule.DeepCopy()
		r.Host = last
		// The status writer updates the Ingress too (its addresses change).
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Get(e.ctx, "echo", metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Spec.Rules = append(cur.Spec.Rules, r)
			_, err = e.c.Client.NetworkingV1().Ingresses(e.ns).Update(e.ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	burstEnd := time.Now()
	var replacementIP string
	e.eventually("the replacement pod serves the last route", 120*time.Second, func() (bool, string) {
		for name, ip := range e.readyHAProxyPods(0) {
			if name != survivor && name != victim {
				replacementIP = ip
			}
		}
		if replacementIP == "" {
			return false, "no replacement pod yet"
		}
		code, err := get(e.ctx, e.http, replacementIP, last)
		return code == 200, fmt.Sprint(code, err)
	})
	took := time.Since(burstEnd)
	e.settle(replacementIP)
	e.settle(survivorIP)
	requests, failed, firstErr := l.stop()
	a, b := e.agentState(survivorIP), e.agentState(replacementIP)
	report(row{name: "5 HAProxy pod deleted in 100 route changes", requests: requests, failed: failed, convergence: took,
		reloads: a.Reloads, note: fmt.Sprintf("survivor reloads %d; replacement hash = survivor's: %t; %s", a.Reloads, a.Hash == b.Hash, firstErr)})
	if failed > 0 {
		t.Errorf("%d of %d requests to the surviving pod failed (first: %s)", failed, requests, firstErr)
	}
	if a.Hash != b.Hash {
		t.Errorf("the replacement runs %s, the survivor %s", b.Hash, a.Hash)
	}
	if requests == 0 {
		t.Error("no requests were sent")
	}
}

// readyHAProxyPods waits for at least n ready HAProxy pods (n = 0: returns what
// is ready now) and returns their IPs by name.
func (e *env) readyHAProxyPods(n int) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	list := func() {
		clear(out)
		pods, err := e.c.Client.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=loadbalancer"})
		if err != nil {
			return
		}
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" && p.DeletionTimestamp == nil {
					out[p.Name] = p.Status.PodIP
				}
			}
		}
	}
	if n == 0 {
		list()
		return out
	}
	e.eventually(fmt.Sprintf("%d ready HAProxy pods", n), 120*time.Second, func() (bool, string) {
		list()
		return len(out) >= n, fmt.Sprint(len(out))
	})
	return out
}
