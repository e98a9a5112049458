package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Forward sends a review to the replica that leads, so that every admission renders
// on the leader's stores and memos (the render the leader's next reconcile takes up
// from), and a replica that does not lead only relays. A review that cannot be
// relayed (no leader known, unreachable, a bad answer) is decided here instead.
type Forward struct {
	// Leader returns the leading replica's webhook address (host:port), or "" when
	// this replica decides (it leads, or no leader is known).
	Leader func(ctx context.Context) string
	// Failed is told an address that gave no usable answer, so that the next
	// review looks the leader up again.
	Failed func(addr string)
}

// forwardedHeader marks a relayed review: it is always decided where it arrives,
// so that two replicas that each believe the other leads never relay in a loop.
const forwardedHeader = "Haptic-Forwarded"

// forwardTimeout bounds one relay: the API server's default timeout is 10s, and a
// review whose relay failed is still decided here in time.
const forwardTimeout = 3 * time.Second

// forward relays body to the leader and returns its AdmissionReview answer, or
// ok=false when this replica must decide (no leader to relay to, or it failed).
func (h *Handler) forward(ctx context.Context, body []byte, uid types.UID) (answer []byte, ok bool) {
	if h.Forward == nil || h.peers == nil {
		return nil, false
	}
	addr := h.Forward.Leader(ctx)
	if addr == "" {
		return nil, false
	}
	answer, err := h.relay(ctx, addr, body, uid)
	if err != nil {
		h.log().Warn("admission not relayed to the leader; deciding here", "leader", addr, "error", err)
		if h.Forward.Failed != nil {
			h.Forward.Failed(addr)
		}
		return nil, false
	}
	return answer, true
}

func (h *Handler) relay(ctx context.Context, addr string, body []byte, uid types.UID) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+"/validate", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(forwardedHeader, "1")
	resp, err := h.peers.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxReview+1))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %.200s", resp.Status, answer)
	}
	var review admissionv1.AdmissionReview
	if len(answer) > maxReview || json.Unmarshal(answer, &review) != nil || review.Response == nil || review.Response.UID != uid {
		return nil, errors.New("the answer is not an AdmissionReview response to this request")
	}
	return answer, nil
}

// peerClient relays reviews to another replica. Replicas serve the same
// certificate (one mounted Secret), which names the Service rather than a pod
// address: the peer is trusted when it presents exactly this replica's own
// certificate.
func (s *Server) peerClient() *http.Client {
	verify := func(rawCerts [][]byte, _ [][]*x509.Certificate) error {
		own, err := s.certificate(nil)
		if err != nil {
			return err
		}
		if len(rawCerts) == 0 || len(own.Certificate) == 0 || !bytes.Equal(rawCerts[0], own.Certificate[0]) {
			return errors.New("the peer does not serve this replica's webhook certificate")
		}
		return nil
	}
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: time.Second}).DialContext,
		TLSHandshakeTimeout: time.Second,
		// Verification is the pinning above; Go's name check would refuse a pod address.
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true, VerifyPeerCertificate: verify}, //nolint:gosec // pinned by VerifyPeerCertificate
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     time.Minute,
	}}
}
