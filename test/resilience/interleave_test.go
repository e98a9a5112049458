package resilience

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// TestInterleavedChanges is case 6 on the cluster (internal/deploy's
// TestInterleavedRuntimeAndReloadsDoNotDiverge checks it at the deployer's level):
// 200 changes to one Ingress on one HAProxy pod, 50 ms apart — a new host rule
// each (a map change, applied at runtime), every 10th also a new
// haproxy-haptic.org/timeout-server (a backend line only a reload applies). Under
// load, then: 0 failed requests; the controller's view (HAProxyCfg's checksum and
// its pod status), the agent's hash and the files on disk agree; the runtime
// verification finds 0 divergence between disk and the worker.
func TestInterleavedChanges(t *testing.T) {
	e := setup(t)
	e.startController("replica-a")
	pod, ip := e.haproxyPod()
	e.eventually("echo served", 120*time.Second, func() (bool, string) {
		code, err := get(e.ctx, e.http, ip, echoHost)
		return code == 200, fmt.Sprint(code, err)
	})
	e.createIngress("interleave", "il-base.localhost", "echo")
	e.settle(ip)
	before := e.agentState(ip)

	l := e.startLoad(ip, 5*time.Minute)
	const changes = 200
	start := time.Now()
	var last string
	for i := range changes {
		last = fmt.Sprintf("il-%d.localhost", i)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			ing, err := e.c.Client.NetworkingV1().Ingresses(e.ns).Get(e.ctx, "interleave", metav1.GetOptions{})
			if err != nil {
				return err
			}
			r := *ing.Spec.Rules[0].DeepCopy()
			r.Host = last
			ing.Spec.Rules = append(ing.Spec.Rules, r)
			if i%10 == 9 {
				if ing.Annotations == nil {
					ing.Annotations = map[string]string{}
				}
				ing.Annotations["haproxy-haptic.org/timeout-server"] = fmt.Sprintf("%ds", 10+i/10)
			}
			_, err = e.c.Client.NetworkingV1().Ingresses(e.ns).Update(e.ctx, ing, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	burst := time.Since(start)
	changed := time.Now()
	e.eventually("the last host is served", 60*time.Second, func() (bool, string) {
		code, err := get(e.ctx, e.http, ip, last)
		return code == 200, fmt.Sprint(code, err)
	})
	took := time.Since(changed)
	e.settle(ip)
	requests, failed, firstErr := l.stop()

	verified, err := e.agent(ip).VerifyState(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	checksum, podChecksum := e.controllerView(pod)
	reloads := verified.Reloads - before.Reloads
	v := verified.LastVerify
	if v == nil {
		t.Fatal("GET /v1/state?verify=runtime returned no verification")
	}
	report(row{name: "6 200 interleaved runtime/reload changes", requests: requests, failed: failed, convergence: took,
		reloads: reloads, note: fmt.Sprintf("burst %s; controller = agent = disk: %t; verify divergence maps %d servers %d; %s",
			burst.Round(10*time.Millisecond), checksum == verified.Hash && podChecksum == verified.Hash && verified.TreeHash == verified.Hash,
			v.MapDivergence, v.ServerDivergence, firstErr)})
	if failed > 0 {
		t.Errorf("%d of %d requests failed (first: %s)", failed, requests, firstErr)
	}
	if checksum != verified.Hash || podChecksum != verified.Hash || verified.TreeHash != verified.Hash {
		t.Errorf("views differ: HAProxyCfg %s, its pod status %s, agent %s, disk %s", checksum, podChecksum, verified.Hash, verified.TreeHash)
	}
	if v.MapDivergence != 0 || v.ServerDivergence != 0 || v.Error != "" {
		t.Errorf("runtime verification: %+v, want 0 divergence", v)
	}
	if verified.MapDivergence != 0 || verified.ServerDivergence != 0 {
		t.Errorf("the agent counted divergence during the changes: maps %d, servers %d", verified.MapDivergence, verified.ServerDivergence)
	}
	if reloads == 0 {
		t.Error("no reload: the timeout changes did not reach HAProxy")
	}
	if reloads >= changes/2 {
		t.Errorf("%d reloads for %d changes of which %d need one: the map changes were not applied at runtime", reloads, changes, changes/10)
	}
	if requests == 0 {
		t.Error("no requests were sent")
	}
}

// controllerView is what the controller published: the HAProxyCfg's checksum and
// the checksum its status reports for pod.
func (e *env) controllerView(pod string) (checksum, podChecksum string) {
	e.t.Helper()
	var out string
	e.eventually("the HAProxyCfg's status for "+pod, 30*time.Second, func() (bool, string) {
		out = strings.TrimSpace(e.kubectl("get", "haproxycfg", "haptic-config", "-o",
			`jsonpath={.spec.checksum} {.status.pods[?(@.name=="`+pod+`")].checksum}`))
		f := strings.Fields(out)
		return len(f) == 2 && f[0] == f[1], out
	})
	f := strings.Fields(out)
	return f[0], f[1]
}
