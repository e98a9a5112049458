package localcluster_test

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
	"github.com/haproxy-haptic/haptic/localcluster/node"
)

// waitFor polls check every 100ms until it returns true, the timeout passes,
// or it returns an error; the last state is reported on failure.
func waitFor(t *testing.T, timeout time.Duration, what string, check func() (bool, string, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		done, state, err := check()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if done {
			return
		}
		last = state
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, last)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// listPods lists the pods matching selector in the namespace.
func listPods(t *testing.T, ns *clustertest.Namespace, selector string) []corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods, err := ns.Client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("list pods: %v", err)
	}
	return pods.Items
}

// waitReadyPods waits until exactly n pods match and all are Running and Ready.
func waitReadyPods(t *testing.T, ns *clustertest.Namespace, selector string, n int, timeout time.Duration) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	waitFor(t, timeout, fmt.Sprintf("%d ready pods (%s)", n, selector), func() (bool, string, error) {
		pods = listPods(t, ns, selector)
		ready := 0
		var states []string
		for _, p := range pods {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(&p) {
				ready++
			}
			states = append(states, fmt.Sprintf("%s:%s/ready=%v/ip=%s", p.Name, p.Status.Phase, podReady(&p), p.Status.PodIP))
		}
		return len(pods) == n && ready == n, fmt.Sprint(states), nil
	})
	return pods
}

// readyEndpoints returns the sorted ready addresses the EndpointSlices of a Service list.
func readyEndpoints(t *testing.T, ns *clustertest.Namespace, service string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	slices, err := ns.Client.DiscoveryV1().EndpointSlices(ns.Name).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + service,
	})
	if err != nil {
		t.Fatalf("list endpointslices: %v", err)
	}
	var addrs []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				addrs = append(addrs, e.Addresses...)
			}
		}
	}
	sort.Strings(addrs)
	return addrs
}

func podIPs(pods []corev1.Pod) []string {
	ips := make([]string, 0, len(pods))
	for _, p := range pods {
		ips = append(ips, p.Status.PodIP)
	}
	sort.Strings(ips)
	return ips
}

// assertPodIPs checks that every pod has its own address in the pod range.
func assertPodIPs(t *testing.T, pods []corev1.Pod) {
	t.Helper()
	podRange := netip.MustParsePrefix("10.244.0.0/16")
	seen := map[string]string{}
	for _, p := range pods {
		addr, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil || !podRange.Contains(addr) {
			t.Errorf("pod %s has IP %q, want one in %s", p.Name, p.Status.PodIP, podRange)
		}
		if other, dup := seen[p.Status.PodIP]; dup {
			t.Errorf("pods %s and %s share IP %s", p.Name, other, p.Status.PodIP)
		}
		seen[p.Status.PodIP] = p.Name
		if len(p.Status.PodIPs) != 1 || p.Status.HostIP == "" {
			t.Errorf("pod %s: podIPs %v hostIP %q", p.Name, p.Status.PodIPs, p.Status.HostIP)
		}
	}
}

// processCount counts live container processes of pods under key ("ns/" or "ns/pod").
func processCount(t *testing.T, key string) int {
	t.Helper()
	pids, err := node.PodProcesses(key)
	if err != nil {
		t.Fatalf("scan processes: %v", err)
	}
	return len(pids)
}

func waitProcessCount(t *testing.T, key string, n int, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, fmt.Sprintf("%d processes of %s", n, key), func() (bool, string, error) {
		got := processCount(t, key)
		return got == n, fmt.Sprintf("%d processes", got), nil
	})
}
