package chart

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// relayedAdmission sends an admission review for a bad Ingress to the replica that
// does not lead, as the API server would: the leader decides it (its denial comes
// back), the standby only relays.
func (in *install) relayedAdmission(t *testing.T) {
	var leaderIP, standbyIP, standbyPod string
	in.eventually("one controller replica labelled leader, one not", 60*time.Second, func() (bool, string) {
		out := in.kubectl("get", "pods", "-n", in.ns, "-l", "app.kubernetes.io/instance="+in.ns+",app.kubernetes.io/component=controller",
			"-o", `jsonpath={range .items[*]}{.metadata.name} {.status.podIP} {.metadata.labels.haproxy-haptic\.org/leader}{"\n"}{end}`)
		leaderIP, standbyIP = "", ""
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			switch f := strings.Fields(line); {
			case len(f) == 3 && f[2] == "true":
				leaderIP = f[1]
			case len(f) == 2:
				standbyPod, standbyIP = f[0], f[1]
			}
		}
		return leaderIP != "" && standbyIP != "", out
	})
	results := func(ip string) map[string]float64 {
		code, body, err := in.get("http://"+ip+":9090/metrics", "")
		if err != nil || code != 200 {
			t.Fatalf("scrape %s: %d %v", ip, code, err)
		}
		return webhookResults(body, "ingresses.networking.k8s.io")
	}
	obj, _ := json.Marshal(map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": "relayed", "namespace": in.ns,
			"annotations": map[string]any{"haproxy-haptic.org/timeout-server": "5 parsecs"}},
		"spec": map[string]any{"ingressClassName": in.ns, "rules": []any{map[string]any{"host": "relayed.localhost",
			"http": map[string]any{"paths": []any{map[string]any{"path": "/", "pathType": "Prefix",
				"backend": map[string]any{"service": map[string]any{"name": "echo", "port": map[string]any{"number": 80}}}}}}}}},
	})
	// The test stands in for the API server, which trusts the chart's CA; the
	// certificate names the Service, not the pod address dialled here.
	client := netns.HTTPClient(in.c.Config.Netns, &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, 10*time.Second) //nolint:gosec // test client
	ask := func(uid string) *admissionv1.AdmissionResponse {
		review, _ := json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: types.UID(uid), Operation: admissionv1.Create, Namespace: in.ns, Name: "relayed",
				Kind:     metav1.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
				Resource: metav1.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
				Object:   runtime.RawExtension{Raw: obj}}})
		req, err := http.NewRequestWithContext(in.ctx, http.MethodPost, "https://"+standbyIP+":9443/validate", bytes.NewReader(review))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answer admissionv1.AdmissionReview
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || answer.Response == nil {
			t.Fatalf("standby answered %s: %v", resp.Status, err)
		}
		if r := answer.Response; r.Allowed || string(r.UID) != uid || r.Result == nil || !strings.Contains(r.Result.Message, "parsecs") {
			t.Fatalf("the bad Ingress is not denied with the library's reason: %+v", r)
		}
		return answer.Response
	}
	// Until the standby knows the leader's pod (it has just been labelled) it decides
	// itself, as it does whenever the leader cannot be reached; then it relays.
	deadline := time.Now().Add(30 * time.Second)
	for i := 1; ; i++ {
		standbyBefore, leaderBefore := results(standbyIP), results(leaderIP)
		answer := ask(fmt.Sprintf("relayed-%d", i))
		standby, leader := results(standbyIP), results(leaderIP)
		if standby["forwarded"]-standbyBefore["forwarded"] == 1 {
			if d := standby["denied"] - standbyBefore["denied"]; d != 0 {
				t.Errorf("standby decided %v denials itself besides relaying; want 0", d)
			}
			if d := leader["denied"] - leaderBefore["denied"]; d != 1 {
				t.Errorf("leader denied %v reviews; want 1", d)
			}
			t.Logf("review %d: standby %s relayed it to leader %s, which denied it: %s", i, standbyIP, leaderIP, answer.Result.Message)
			return
		}
		if d := standby["denied"] - standbyBefore["denied"]; d != 1 {
			t.Fatalf("review %d: neither relayed nor decided by the standby (denied %v)", i, d)
		}
		if time.Now().After(deadline) {
			// The process node keeps each container's log under its pod's directory.
			logs, _ := os.ReadFile(filepath.Join(in.c.Config.PodsDir(), in.ns+"_"+standbyPod, "haptic.log"))
			t.Fatalf("the standby decided %d reviews itself and relayed none in 30s; its log:\n%s", i, logs)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// webhookResults reads haptic_webhook_requests_total of resource by result from a
// scrape.
func webhookResults(scrape, resource string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(scrape))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "haptic_webhook_requests_total{") || !strings.Contains(line, `resource="`+resource+`"`) {
			continue
		}
		_, rest, _ := strings.Cut(line, `result="`)
		result, _, _ := strings.Cut(rest, `"`)
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			out[result] += v
		}
	}
	return out
}
