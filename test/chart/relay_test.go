package chart

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/haproxy-haptic/haptic/localcluster/netns"
)

// relayedAdmission sends an admission review for a bad Ingress to the replica that
// does not lead, as the API server would: the leader decides it (its denial comes
// back), the standby only relays.
func (in *install) relayedAdmission(t *testing.T) {
	var leaderIP, standbyIP string
	in.eventually("one controller replica labelled leader, one not", 60*time.Second, func() (bool, string) {
		out := in.kubectl("get", "pods", "-n", in.ns, "-l", "app.kubernetes.io/instance="+in.ns+",app.kubernetes.io/component=controller",
			"-o", `jsonpath={range .items[*]}{.status.podIP} {.metadata.labels.haproxy-haptic\.org/leader}{"\n"}{end}`)
		leaderIP, standbyIP = "", ""
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			switch f := strings.Fields(line); {
			case len(f) == 2 && f[1] == "true":
				leaderIP = f[0]
			case len(f) == 1:
				standbyIP = f[0]
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
	standbyBefore, leaderBefore := results(standbyIP), results(leaderIP)

	obj, _ := json.Marshal(map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": "relayed", "namespace": in.ns,
			"annotations": map[string]any{"haproxy-haptic.org/timeout-server": "5 parsecs"}},
		"spec": map[string]any{"ingressClassName": in.ns, "rules": []any{map[string]any{"host": "relayed.localhost",
			"http": map[string]any{"paths": []any{map[string]any{"path": "/", "pathType": "Prefix",
				"backend": map[string]any{"service": map[string]any{"name": "echo", "port": map[string]any{"number": 80}}}}}}}}},
	})
	review, _ := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "relayed-1", Operation: admissionv1.Create, Namespace: in.ns, Name: "relayed",
			Kind:     metav1.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
			Resource: metav1.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
			Object:   runtime.RawExtension{Raw: obj}}})
	// The test stands in for the API server, which trusts the chart's CA; the
	// certificate names the Service, not the pod address dialled here.
	client := netns.HTTPClient(in.c.Config.Netns, &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, 10*time.Second) //nolint:gosec // test client
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
	if r := answer.Response; r.Allowed || r.UID != "relayed-1" || r.Result == nil || !strings.Contains(r.Result.Message, "parsecs") {
		t.Fatalf("the bad Ingress is not denied with the library's reason: %+v", r)
	}
	standby, leader := results(standbyIP), results(leaderIP)
	if d := standby["forwarded"] - standbyBefore["forwarded"]; d != 1 {
		t.Errorf("standby relayed %v reviews; want 1", d)
	}
	if d := standby["denied"] - standbyBefore["denied"]; d != 0 {
		t.Errorf("standby decided %v denials itself; want 0 (the leader decides)", d)
	}
	if d := leader["denied"] - leaderBefore["denied"]; d != 1 {
		t.Errorf("leader denied %v reviews; want 1", d)
	}
	t.Logf("standby %s relayed the review to leader %s, which denied it: %s", standbyIP, leaderIP, answer.Response.Result.Message)
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
