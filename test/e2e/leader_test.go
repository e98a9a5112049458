package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/internal/controller"
)

// TestLeaderElection runs two controller replicas: only the leader deploys; the
// follower answers admission from stores of its own; when the leader stops, the
// other takes over and delivers the next change.
func TestLeaderElection(t *testing.T) {
	e := setupWithStart(t, 1, librariesConfig(t, "", "base", "ingress"), false)
	le := func(id string) *controller.LeaderElection {
		return &controller.LeaderElection{Identity: id, LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}
	}
	metricsA, stopA := e.runController(le("replica-a"))
	e.metrics = metricsA
	e.eventually("replica-a leads", 30*time.Second, func() (bool, string) {
		v, err := e.tryMetric("haptic_leader", "")
		return err == nil && v == 1, fmt.Sprint(v, err)
	})
	ca := e.listenWebhook() // replica-b serves the webhook
	metricsB, _ := e.runController(le("replica-b"))
	var ip string
	e.eventually("the leader routes echo", 90*time.Second, func() (bool, string) {
		for _, addr := range e.haproxyPods() {
			ip = addr
		}
		code, _, err := e.get(ip, echoHost, "/")
		return code == 200, fmt.Sprint(code, err)
	})
	e.metrics = metricsB
	time.Sleep(2 * time.Second) // replica-b has had time to do something wrong
	if leader, deploys := e.metric("haptic_leader", ""), e.metric("haptic_deploy_apply_total", ""); leader != 0 || deploys != 0 {
		t.Fatalf("the follower must not deploy: haptic_leader %v, deploys %v", leader, deploys)
	}
	// The follower refuses an Ingress the library rejects.
	e.registerWebhook(ca)
	ingresses := e.c.Client.NetworkingV1().Ingresses(e.ns)
	e.eventually("the follower validates admissions", 60*time.Second, func() (bool, string) {
		_, err := ingresses.Create(e.ctx, e.timeoutIngress("bad-on-follower", "5 parsecs"), metav1.CreateOptions{})
		if err == nil {
			_ = ingresses.Delete(e.ctx, "bad-on-follower", metav1.DeleteOptions{})
			return false, "admitted (standby not synced yet?)"
		}
		return strings.Contains(err.Error(), "timeout-server"), err.Error()
	})

	stopA() // releases the Lease
	e.eventually("replica-b leads", 30*time.Second, func() (bool, string) {
		v, err := e.tryMetric("haptic_leader", "")
		return err == nil && v == 1, fmt.Sprint(v, err)
	})
	e.createRoute("after-failover", "after-failover.localhost", "/")
	e.eventually("the new leader delivers a new route", 60*time.Second, func() (bool, string) {
		code, _, err := e.get(ip, "after-failover.localhost", "/")
		return code == 200, fmt.Sprint(code, err)
	})
	// The agent may finish an apply whose answer the controller did not wait for (a
	// retried PUT): the count follows shortly.
	e.eventually("the new leader counts its deploy", 30*time.Second, func() (bool, string) {
		deploys := e.metric("haptic_deploy_apply_total", `result="success"`)
		return deploys > 0, fmt.Sprint(deploys)
	})
}
