package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// BenchmarkIngressApplyToFirst200 measures the time from creating an Ingress to its
// first 200 through HAProxy, on the local cluster with the live pipeline:
//
//	make bench-e2e   (go test -run '^$' -bench IngressApplyToFirst200 -benchtime 20x ./test/e2e/)
func BenchmarkIngressApplyToFirst200(b *testing.B) {
	e := setup(b, 1)
	var ip string
	e.eventually("the sample route", 120*time.Second, func() (bool, string) {
		pods := e.haproxyPods()
		if len(pods) != 1 {
			return false, "no pod"
		}
		ip = pods[firstKey(pods)]
		code, _, err := e.get(ip, echoHost, "/")
		return code == 200, fmt.Sprint(code, err)
	})
	pathType := networkingv1.PathTypePrefix
	class := e.ns // the test-private IngressClass (see applyFile)
	var samples []time.Duration
	b.ResetTimer()
	for i := range b.N {
		host := fmt.Sprintf("bench-%d-%d.localhost", b.N, i)
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: &pathType,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "echo", Port: networkingv1.ServiceBackendPort{Name: "http"}}},
				}}}},
			}}},
		}
		// Space the samples by more than minDeploymentInterval (2s) so that each
		// measures the pipeline, not the reload pacing of the previous sample.
		b.StopTimer()
		time.Sleep(2500 * time.Millisecond)
		b.StartTimer()
		start := time.Now()
		if _, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Create(e.ctx, ing, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		for {
			if code, _, _ := e.get(ip, host, "/"); code == 200 {
				break
			}
			if time.Since(start) > 30*time.Second {
				b.Fatalf("no 200 for %s after 30s", host)
			}
			time.Sleep(5 * time.Millisecond)
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Milliseconds()), "median-ms-to-200")
	b.ReportMetric(float64(samples[len(samples)-1].Milliseconds()), "max-ms-to-200")
	b.Logf("apply → first 200 over %d Ingresses: min %s median %s max %s", len(samples),
		samples[0].Round(time.Millisecond), samples[len(samples)/2].Round(time.Millisecond), samples[len(samples)-1].Round(time.Millisecond))
}

// BenchmarkRouteAtScale measures, with the default libraries on a config of 1,000
// and 5,000 routes, the time from creating one route (a new Service and Ingress:
// a new backend, placed in a pool backend at runtime) to its first 200, and
// counts the reloads that took (want 0):
//
//	make bench-reloadfree
func BenchmarkRouteAtScale(b *testing.B) {
	for _, routes := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("routes=%d", routes), func(b *testing.B) {
			e := setupLibraries(b, 1, "", "base", "ingress")
			var ip string
			e.eventually("the sample route", 120*time.Second, func() (bool, string) {
				for _, addr := range e.haproxyPods() {
					ip = addr
				}
				code, _, err := e.get(ip, echoHost, "/")
				return code == 200, fmt.Sprint(code, err)
			})
			e.createIngresses(routes)
			last := fmt.Sprintf("scale-%d.localhost", routes-1)
			e.eventually("all routes", 10*time.Minute, func() (bool, string) {
				code, _, err := e.get(ip, last, "/")
				return code == 200, fmt.Sprint(code, err)
			})
			// one change on a quiet cluster: earlier runs' namespaces gone (their
			// thousands of objects deleted, each an event), this run's statuses written
			e.quietCluster(routes)
			e.settle(ip)
			before := e.reloadCounts(ip)
			stagesBefore := e.changeStages()
			var samples []time.Duration
			b.ResetTimer()
			for i := range b.N {
				name := fmt.Sprintf("probe-%d", i)
				host := name + ".localhost"
				start := time.Now()
				e.createRoute(name, host, "/")
				for {
					if code, _, _ := e.get(ip, host, "/"); code == 200 {
						break
					}
					if time.Since(start) > 60*time.Second {
						b.Fatalf("no 200 for %s after 60s", host)
					}
					time.Sleep(5 * time.Millisecond)
				}
				samples = append(samples, time.Since(start))
				b.StopTimer()
				e.deleteRoute(name)
				time.Sleep(500 * time.Millisecond)
				b.StartTimer()
			}
			b.StopTimer()
			after := e.reloadCounts(ip)
			slices.Sort(samples)
			b.ReportMetric(float64(samples[len(samples)/2].Milliseconds()), "median-ms-to-200")
			b.ReportMetric(float64(samples[len(samples)-1].Milliseconds()), "max-ms-to-200")
			b.ReportMetric(float64(after.agent-before.agent), "reloads")
			b.Logf("%d routes: new route → first 200 over %d samples: min %s median %s max %s; reloads %d; %s",
				routes, len(samples), samples[0].Round(time.Millisecond), samples[len(samples)/2].Round(time.Millisecond),
				samples[len(samples)-1].Round(time.Millisecond), after.agent-before.agent, e.changeStages().since(stagesBefore))
		})
	}
}

// createIngresses creates n Ingresses scale-<i>.localhost → echo, 8 at a time.
func (e *env) createIngresses(n int) {
	e.t.Helper()
	e.createIngressRange(0, n)
}

// createIngressRange creates the Ingresses scale-<from> … scale-<to-1>, 8 at a time.
func (e *env) createIngressRange(from, to int) {
	e.t.Helper()
	cfg := rest.CopyConfig(e.c.REST)
	cfg.QPS, cfg.Burst = 1000, 2000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	pathType := networkingv1.PathTypePrefix
	class := e.ns
	createAll(e.t, to-from, func(k int) error {
		i := from + k
		ing := &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("scale-%d", i)},
			Spec: networkingv1.IngressSpec{IngressClassName: &class, Rules: []networkingv1.IngressRule{{
				Host: fmt.Sprintf("scale-%d.localhost", i),
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: "/", PathType: &pathType,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "echo", Port: networkingv1.ServiceBackendPort{Name: "http"}}},
				}}}},
			}}},
		}
		_, err := client.NetworkingV1().Ingresses(e.ns).Create(e.ctx, ing, metav1.CreateOptions{})
		return err
	})
}

// changeStageNames are haptic_change_stage_seconds' stages, in the order a change
// passes them.
var changeStageNames = []string{"rendered", "validated", "planned", "applied"}

// stageTimes are haptic_change_stage_seconds' sums and counts by stage.
type stageTimes map[string][2]float64

// changeStages reads haptic_change_stage_seconds from the controller.
func (e *env) changeStages() stageTimes {
	out := stageTimes{}
	for _, st := range changeStageNames {
		out[st] = [2]float64{e.metric("haptic_change_stage_seconds_sum", `stage="`+st+`"`),
			e.metric("haptic_change_stage_seconds_count", `stage="`+st+`"`)}
	}
	return out
}

// since is the mean time after a change's first watch event each stage ended, over
// the observations made since before.
func (s stageTimes) since(before stageTimes) string {
	var parts []string
	for _, st := range changeStageNames {
		sum, n := s[st][0]-before[st][0], s[st][1]-before[st][1]
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %.1f ms", st, 1000*sum/n))
		}
	}
	return "mean time from a change's first event to its stage: " + strings.Join(parts, ", ")
}

// quietCluster waits until the test namespaces of earlier tests are gone and the
// controller has written the status of the first n Ingresses it serves.
func (e *env) quietCluster(n int) {
	e.t.Helper()
	e.eventually("earlier test namespaces gone", 10*time.Minute, func() (bool, string) {
		list, err := e.c.Client.CoreV1().Namespaces().List(e.ctx, metav1.ListOptions{LabelSelector: "haptic.test/e2e=true"})
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, ns := range list.Items {
			if ns.Name != e.ns {
				left = append(left, ns.Name)
			}
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
	e.eventually("Ingress statuses written", 10*time.Minute, func() (bool, string) {
		w := e.metric("haptic_status_writes_total", `kind="Ingress"`)
		return w >= float64(n), fmt.Sprint(w, " written")
	})
}
