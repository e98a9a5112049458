package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Request is one proposed change.
type Request struct {
	Resource  schema.GroupVersionResource
	Kind      string
	Operation admissionv1.Operation
	Namespace string
	Name      string
	// Object is the proposed object (nil on DELETE); OldObject the stored one (UPDATE).
	Object, OldObject map[string]any
}

// Unchanged reports whether an UPDATE changes nothing a configuration can see: the
// objects are equal but for status and the bookkeeping metadata the API server
// maintains (a re-applied, unchanged manifest).
func (r Request) Unchanged() bool {
	if r.Operation != admissionv1.Update || r.Object == nil || r.OldObject == nil {
		return false
	}
	return reflect.DeepEqual(content(r.Object), content(r.OldObject))
}

// content is an object without status and server-maintained metadata.
func content(obj map[string]any) map[string]any {
	out := maps.Clone(obj)
	delete(out, "status")
	if meta, ok := obj["metadata"].(map[string]any); ok {
		meta = maps.Clone(meta)
		for _, k := range []string{"resourceVersion", "generation", "managedFields", "creationTimestamp", "uid"} {
			delete(meta, k)
		}
		out["metadata"] = meta
	}
	return out
}

// What names the object in messages: Kind namespace/name.
func (r Request) What() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Validator decides a change: a non-nil error denies it with the error as the
// message; warnings are shown to the client either way.
type Validator interface {
	Validate(ctx context.Context, r Request) (warnings []string, err error)
}

// Observer is told every request (metrics); result is allowed, denied, error (no
// decision: the API server applied the failurePolicy) or forwarded (the leading
// replica decided; it counts the decision).
type Observer func(gvr schema.GroupVersionResource, result string, took time.Duration)

// Handler serves POST /validate with AdmissionReview v1.
type Handler struct {
	Validator Validator
	Observe   Observer
	Log       *slog.Logger
	// Timeout bounds one decision (the API server's own timeout is at most 30s).
	Timeout time.Duration
	// Forward, when set, relays reviews to the leading replica (forward.go).
	Forward *Forward

	peers *http.Client // set by Server.Run: relays to replicas serving its certificate
}

// maxReview bounds a request body: the API server's object limit plus envelope.
const maxReview = 4 << 20

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReview+1))
	if err != nil || len(body) > maxReview {
		http.Error(w, "unreadable or oversized AdmissionReview", http.StatusRequestEntityTooLarge)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview with a request", http.StatusBadRequest)
		return
	}
	start := time.Now()
	gvr := schema.GroupVersionResource(review.Request.Resource)
	if r.Header.Get(forwardedHeader) == "" {
		if answer, ok := h.forward(r.Context(), body, review.Request.UID); ok {
			h.observe(gvr, "forwarded", start)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(answer)
			return
		}
	}
	resp, err := h.decide(r.Context(), review.Request)
	if err != nil {
		// Undecided: the API server applies the webhook's failurePolicy.
		h.observe(gvr, "error", start)
		h.log().Warn("admission not decided", "error", err)
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	resp.UID = review.Request.UID
	review.Response, review.Request = resp, nil
	if resp.Allowed {
		h.observe(gvr, "allowed", start)
	} else {
		h.observe(gvr, "denied", start)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

func (h *Handler) observe(gvr schema.GroupVersionResource, result string, start time.Time) {
	if h.Observe != nil {
		h.Observe(gvr, result, time.Since(start))
	}
}

// decide turns the review's request into a Request, asks the validator, and builds
// the response; an error means no decision (the validator ran out of time).
func (h *Handler) decide(ctx context.Context, ar *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, error) {
	req := Request{
		Resource:  schema.GroupVersionResource(ar.Resource),
		Kind:      ar.Kind.Kind,
		Operation: ar.Operation,
		Namespace: ar.Namespace,
		Name:      ar.Name,
	}
	if ar.Operation != admissionv1.Delete {
		if len(ar.Object.Raw) == 0 {
			return deny(http.StatusBadRequest, req.What()+": the review carries no object"), nil
		}
		// Decoded as the informers decode (integers as int64), so that the proposed
		// object equals the one the watch brings once stored.
		if err := utiljson.Unmarshal(ar.Object.Raw, &req.Object); err != nil {
			return deny(http.StatusBadRequest, fmt.Sprintf("%s: object: %v", req.What(), err)), nil
		}
		if len(ar.OldObject.Raw) > 0 {
			if err := utiljson.Unmarshal(ar.OldObject.Raw, &req.OldObject); err != nil {
				return deny(http.StatusBadRequest, fmt.Sprintf("%s: oldObject: %v", req.What(), err)), nil
			}
		}
		if req.Name == "" { // generateName: the API server names it later
			if meta, ok := req.Object["metadata"].(map[string]any); ok {
				req.Name, _ = meta["generateName"].(string)
			}
		}
	}
	if h.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.Timeout)
		defer cancel()
	}
	warnings, err := h.Validator.Validate(ctx, req)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("validate %s: %w", req.What(), err)
	case err != nil:
		h.log().Info("admission denied", "object", req.What(), "operation", req.Operation, "reason", err)
		resp := deny(http.StatusUnprocessableEntity, fmt.Sprintf("HAPTIC: %s: %v", req.What(), err))
		resp.Warnings = warnings
		return resp, nil
	}
	return &admissionv1.AdmissionResponse{Allowed: true, Warnings: warnings}, nil
}

func deny(code int32, msg string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{Status: metav1.StatusFailure, Code: code,
		Reason: metav1.StatusReasonInvalid, Message: msg}}
}

func (h *Handler) log() *slog.Logger {
	if h.Log == nil {
		return slog.Default()
	}
	return h.Log
}
