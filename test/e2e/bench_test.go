package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
