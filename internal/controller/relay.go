package controller

import (
	"context"
	"net"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A replica that does not lead relays admission reviews to the one that does
// (webhook.Forward): the leader renders the change on its fleets' memos, which its
// next reconcile takes up from, instead of a standby rendering every Gateway on
// its own. The leader is the Lease holder (its identity is its pod's name); its
// address is its pod's IP, once its pod carries the leader label, and this
// replica's webhook port (every replica listens on the same one).
type leaderPeer struct {
	mu       sync.Mutex
	self     string // this replica's identity
	identity string // the Lease holder, as last observed
	addr     string // its webhook address; "" until looked up
	retry    time.Time
}

// lookupBackoff spaces the lookups of a leader whose pod is not labelled yet (a
// new leader labels its pod once it leads); meanwhile reviews are decided here.
const lookupBackoff = time.Second

func (p *leaderPeer) observe(identity string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if identity != p.identity {
		p.identity, p.addr, p.retry = identity, "", time.Time{}
	}
}

func (p *leaderPeer) setSelf(identity string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.self = identity
}

// leaderWebhook is the leader's webhook address, or "" when this replica decides:
// it leads, no other leader is known, or its pod does not say it leads yet.
func (c *Controller) leaderWebhook(ctx context.Context) string {
	p := &c.peer
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.identity == "" || p.identity == p.self {
		return ""
	}
	if p.addr != "" || time.Now().Before(p.retry) {
		return p.addr
	}
	p.retry = time.Now().Add(lookupBackoff)
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	pod, err := c.d.kube.CoreV1().Pods(c.opts.Namespace).Get(ctx, p.identity, metav1.GetOptions{})
	if err != nil || pod.Labels[leaderLabel] != "true" || pod.Status.PodIP == "" {
		return ""
	}
	_, port, err := net.SplitHostPort(c.opts.WebhookListener.Addr().String())
	if err != nil {
		return ""
	}
	p.addr = net.JoinHostPort(pod.Status.PodIP, port)
	return p.addr
}

// leaderFailed forgets an address that did not answer: the next review looks the
// leader up again (after lookupBackoff).
func (c *Controller) leaderFailed(addr string) {
	p := &c.peer
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.addr == addr {
		p.addr, p.retry = "", time.Now().Add(lookupBackoff)
	}
}

// relaysToLeader reports whether reviews can be relayed: replicas that elect a
// leader and know their pods.
func (c *Controller) relaysToLeader() bool {
	return c.opts.LeaderElection != nil && c.opts.PodName != ""
}
