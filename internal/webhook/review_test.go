package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// decider denies objects whose name starts with "bad" and waits for the context on
// "slow".
type decider struct{ seen []Request }

func (d *decider) Validate(ctx context.Context, r Request) ([]string, error) {
	d.seen = append(d.seen, r)
	switch {
	case strings.HasPrefix(r.Name, "bad"):
		return []string{"look"}, errors.New(`annotation haproxy-haptic.org/timeout-server: "5 parsecs" is not a duration`)
	case r.Name == "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return []string{"fine"}, nil
}

func review(t *testing.T, h http.Handler, op admissionv1.Operation, name string, obj map[string]any) (*http.Response, *admissionv1.AdmissionReview) {
	t.Helper()
	ar := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID("uid-" + name), Operation: op, Namespace: "web", Name: name,
			Kind:     metav1.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
			Resource: metav1.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}}}
	if obj != nil {
		raw, _ := json.Marshal(obj)
		ar.Request.Object = runtime.RawExtension{Raw: raw}
	}
	body, _ := json.Marshal(ar)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body)))
	resp := rec.Result()
	var out admissionv1.AdmissionReview
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
	}
	return resp, &out
}

func TestHandlerDecides(t *testing.T) {
	d := &decider{}
	var results []string
	h := &Handler{Validator: d, Timeout: 50 * time.Millisecond,
		Observe: func(gvr schema.GroupVersionResource, result string, _ time.Duration) {
			results = append(results, gvr.GroupResource().String()+"="+result)
		}}
	obj := map[string]any{"metadata": map[string]any{"name": "x"}, "spec": map[string]any{}}

	_, out := review(t, h, admissionv1.Create, "good", obj)
	if r := out.Response; r == nil || !r.Allowed || r.UID != "uid-good" || len(r.Warnings) != 1 || out.Request != nil {
		t.Fatalf("allowed: %+v", out)
	}
	_, out = review(t, h, admissionv1.Update, "bad-one", obj)
	r := out.Response
	if r == nil || r.Allowed || r.Result.Code != http.StatusUnprocessableEntity ||
		r.Result.Message != `HAPTIC: Ingress web/bad-one: annotation haproxy-haptic.org/timeout-server: "5 parsecs" is not a duration` {
		t.Fatalf("denied: %+v %+v", r, r.Result)
	}
	if _, out = review(t, h, admissionv1.Delete, "gone", nil); !out.Response.Allowed || d.seen[len(d.seen)-1].Object != nil {
		t.Fatalf("delete: %+v", out.Response)
	}
	if _, out = review(t, h, admissionv1.Create, "bad-no-object", nil); out.Response.Allowed || out.Response.Result.Code != http.StatusBadRequest {
		t.Fatalf("a create without object: %+v", out.Response)
	}
	resp, _ := review(t, h, admissionv1.Create, "slow", obj)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("an undecided review answered %s, want 503 (the failurePolicy decides)", resp.Status)
	}
	want := "ingresses.networking.k8s.io=allowed ingresses.networking.k8s.io=denied ingresses.networking.k8s.io=allowed ingresses.networking.k8s.io=denied ingresses.networking.k8s.io=error"
	if got := strings.Join(results, " "); got != want {
		t.Fatalf("observed %s\nwant     %s", got, want)
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/validate", strings.NewReader(`{"kind":"AdmissionReview"}`)))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("a review without request: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/validate", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", rec.Code)
	}
}

func TestRequestUnchanged(t *testing.T) {
	obj := func(rv, value string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "a", "resourceVersion": rv, "generation": int64(3),
			"annotations": map[string]any{"haproxy-haptic.org/timeout-server": value}},
			"spec": map[string]any{"rules": []any{}}, "status": map[string]any{"loadBalancer": rv}}
	}
	cases := []struct {
		r    Request
		want bool
	}{
		{Request{Operation: admissionv1.Update, Object: obj("2", "5s"), OldObject: obj("1", "5s")}, true},
		{Request{Operation: admissionv1.Update, Object: obj("2", "bad"), OldObject: obj("1", "5s")}, false},
		{Request{Operation: admissionv1.Create, Object: obj("2", "5s"), OldObject: obj("1", "5s")}, false},
		{Request{Operation: admissionv1.Update, Object: obj("2", "5s")}, false},
	}
	for i, c := range cases {
		if got := c.r.Unchanged(); got != c.want {
			t.Errorf("case %d: Unchanged() = %v, want %v", i, got, c.want)
		}
	}
}

// The proposed object is decoded as the informers decode objects (integers as
// int64), so that it equals the stored object the watch brings.
func TestHandlerDecodesAsInformers(t *testing.T) {
	d := &decider{}
	obj := map[string]any{"metadata": map[string]any{"name": "x", "generation": 1},
		"spec": map[string]any{"port": 80, "weight": 0.5}}
	if _, out := review(t, &Handler{Validator: d}, admissionv1.Create, "numbers", obj); out.Response == nil || !out.Response.Allowed {
		t.Fatalf("answer: %+v", out.Response)
	}
	spec := d.seen[0].Object["spec"].(map[string]any)
	if _, ok := spec["port"].(int64); !ok {
		t.Errorf("port decoded as %T, want int64", spec["port"])
	}
	if _, ok := spec["weight"].(float64); !ok {
		t.Errorf("weight decoded as %T, want float64", spec["weight"])
	}
	if _, ok := d.seen[0].Object["metadata"].(map[string]any)["generation"].(int64); !ok {
		t.Error("generation not decoded as int64")
	}
}
