package webhook

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// serve runs a webhook server with the certificate in dir and returns its address.
func serve(t *testing.T, dir string, h *Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&Server{Listener: ln, CertDir: dir, Handler: h}).Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return ln.Addr().String()
}

// relaying is a replica that relays to leader (its certificate in dir) and records
// what it observed and which addresses failed.
type relaying struct {
	h       *Handler
	d       *decider
	mu      sync.Mutex
	results []string
	failed  []string
}

func newRelaying(dir string, leader func() string) *relaying {
	r := &relaying{d: &decider{}}
	r.h = &Handler{Validator: r.d, Timeout: 5 * time.Second,
		Observe: func(_ schema.GroupVersionResource, result string, _ time.Duration) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.results = append(r.results, result)
		},
		Forward: &Forward{Leader: func(context.Context) string { return leader() },
			Failed: func(addr string) {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.failed = append(r.failed, addr)
			}}}
	r.h.peers = (&Server{CertDir: dir}).peerClient()
	return r
}

func TestForwardToLeader(t *testing.T) {
	cert, err := NewCertificate([]string{"haptic-webhook.haptic.svc"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeCert(t, dir, cert, time.Now())
	leader := &decider{}
	leaderAddr := serve(t, dir, &Handler{Validator: leader, Timeout: 5 * time.Second})
	obj := map[string]any{"metadata": map[string]any{"name": "x"}, "spec": map[string]any{}}

	t.Run("the leader decides, its denial reaches the API server", func(t *testing.T) {
		standby := newRelaying(dir, func() string { return leaderAddr })
		_, out := review(t, standby.h, admissionv1.Create, "bad-timeout", obj)
		if r := out.Response; r == nil || r.Allowed || r.UID != "uid-bad-timeout" || !strings.Contains(r.Result.Message, "5 parsecs") {
			t.Fatalf("relayed denial: %+v", out.Response)
		}
		_, out = review(t, standby.h, admissionv1.Create, "good", obj)
		if r := out.Response; r == nil || !r.Allowed || r.UID != "uid-good" {
			t.Fatalf("relayed admission: %+v", out.Response)
		}
		if len(standby.d.seen) != 0 || len(leader.seen) != 2 {
			t.Errorf("decided by the standby %d times, by the leader %d times; want 0 and 2", len(standby.d.seen), len(leader.seen))
		}
		if strings.Join(standby.results, ",") != "forwarded,forwarded" || len(standby.failed) != 0 {
			t.Errorf("standby observed %v, failed %v", standby.results, standby.failed)
		}
	})

	t.Run("an unreachable leader: decided here", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		gone := ln.Addr().String()
		ln.Close()
		standby := newRelaying(dir, func() string { return gone })
		_, out := review(t, standby.h, admissionv1.Create, "bad", obj)
		if r := out.Response; r == nil || r.Allowed || len(standby.d.seen) != 1 {
			t.Fatalf("not decided here: %+v, %d decisions", out.Response, len(standby.d.seen))
		}
		if len(standby.failed) != 1 || standby.failed[0] != gone || standby.results[0] != "denied" {
			t.Errorf("failed %v, observed %v", standby.failed, standby.results)
		}
	})

	t.Run("a peer with another certificate is not trusted", func(t *testing.T) {
		other, err := NewCertificate([]string{"haptic-webhook.haptic.svc"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		otherDir := t.TempDir()
		writeCert(t, otherDir, other, time.Now())
		impostor := &decider{}
		addr := serve(t, otherDir, &Handler{Validator: impostor})
		standby := newRelaying(dir, func() string { return addr })
		_, out := review(t, standby.h, admissionv1.Create, "good", obj)
		if r := out.Response; r == nil || !r.Allowed || len(impostor.seen) != 0 || len(standby.d.seen) != 1 {
			t.Fatalf("relayed to a peer with another certificate: %+v; impostor %d, here %d", out.Response, len(impostor.seen), len(standby.d.seen))
		}
		if len(standby.failed) != 1 {
			t.Errorf("failed %v", standby.failed)
		}
	})

	t.Run("a relayed review is decided where it arrives", func(t *testing.T) {
		// Two replicas that each believe the other leads: one relay, then a decision.
		var bAddr string
		a := newRelaying(dir, func() string { return bAddr })
		b := newRelaying(dir, func() string { return "127.0.0.1:1" })
		bAddr = serve(t, dir, b.h)
		_, out := review(t, a.h, admissionv1.Create, "good", obj)
		if r := out.Response; r == nil || !r.Allowed {
			t.Fatalf("answer: %+v", out.Response)
		}
		if len(a.d.seen) != 0 || len(b.d.seen) != 1 || len(b.failed) != 0 {
			t.Errorf("decisions: relaying %d, relayed-to %d (want 0, 1); relayed-to tried to relay: %v", len(a.d.seen), len(b.d.seen), b.failed)
		}
	})
}
