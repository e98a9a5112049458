package publish

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/deploy"
	"github.com/haproxy-haptic/haptic/internal/plan"
)

func TestSummary(t *testing.T) {
	tests := []struct {
		o    deploy.Outcome
		want string
	}{
		{deploy.Outcome{Mode: deploy.ModeRuntime}, "runtime"},
		{deploy.Outcome{Mode: deploy.ModeRuntime, Ops: 1}, "runtime: 1 operation"},
		{deploy.Outcome{Mode: deploy.ModeRuntime, Ops: 3}, "runtime: 3 operations"},
		{deploy.Outcome{Mode: deploy.ModeRuntime, Ops: 3, FastPathFailed: true, Reloaded: true}, "reload: runtime operations failed"},
		{deploy.Outcome{Mode: deploy.ModeRuntime, FastPathFailed: true, Reloaded: true}, "reload: runtime operations failed"},
		{deploy.Outcome{Mode: deploy.ModeReload, Reloaded: true, Reasons: []plan.Reason{{Section: "backend be_x", Detail: "added"}}},
			"reload: backend be_x: added"},
		{deploy.Outcome{Mode: deploy.ModeReload, Reloaded: true, Reasons: []plan.Reason{
			{Section: "backend be_x", Directive: "balance source", Detail: "added"}, {Section: "global", Detail: "changed"}, {Section: "defaults", Detail: "changed"}}},
			"reload: backend be_x: balance source: added (+2 more)"},
		{deploy.Outcome{Mode: deploy.ModeReload, Reloaded: true}, "reload: full apply"},
		{deploy.Outcome{Mode: deploy.ModeReload}, "full apply: no reload needed"},
	}
	for _, tt := range tests {
		if got := Summary(tt.o); got != tt.want {
			t.Errorf("Summary(%+v) = %q, want %q", tt.o, got, tt.want)
		}
	}
}

func TestApplyOutcome(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	p := ApplyOutcome(v1alpha1.HAProxyCfgPodStatus{}, deploy.Outcome{Pod: "hp-0", Hash: "h1", Mode: deploy.ModeReload, Reloaded: true}, t0)
	if p.Name != "hp-0" || p.Checksum != "h1" || p.LastError != "" || p.LastReloadTime == nil ||
		!p.LastReloadTime.Time.Equal(t0.Truncate(time.Second)) || p.LastOperation != "reload: full apply" {
		t.Fatalf("after reload: %+v", p)
	}
	// A runtime apply keeps the last reload time.
	p = ApplyOutcome(p, deploy.Outcome{Pod: "hp-0", Hash: "h2", Mode: deploy.ModeRuntime}, t0.Add(time.Minute))
	if p.Checksum != "h2" || !p.LastReloadTime.Time.Equal(t0.Truncate(time.Second)) || p.LastOperation != "runtime" {
		t.Fatalf("after runtime: %+v", p)
	}
	// A failure keeps the checksum the pod runs and records the error.
	p = ApplyOutcome(p, deploy.Outcome{Pod: "hp-0", Hash: "h3", Mode: deploy.ModeReload, Err: errors.New("agent answered 500")}, t0.Add(2*time.Minute))
	if p.Checksum != "h2" || p.LastError != "agent answered 500" {
		t.Fatalf("after failure: %+v", p)
	}
	// The next success clears the error.
	p = ApplyOutcome(p, deploy.Outcome{Pod: "hp-0", Hash: "h3", Mode: deploy.ModeRuntime}, t0.Add(3*time.Minute))
	if p.Checksum != "h3" || p.LastError != "" {
		t.Fatalf("after recovery: %+v", p)
	}
}

func TestMergePods(t *testing.T) {
	reload := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	server := []v1alpha1.HAProxyCfgPodStatus{
		{Name: "hp-b", Checksum: "old", LastReloadTime: &reload, LastOperation: "reload: full apply"},
		{Name: "hp-gone", Checksum: "old"},
		{Name: "hp-c", Checksum: "old"},
	}
	local := map[string]v1alpha1.HAProxyCfgPodStatus{
		"hp-b": {Name: "hp-b", Checksum: "new", LastOperation: "runtime"},
		"hp-a": {Name: "hp-a", Checksum: "new", LastOperation: "reload: full apply"},
	}
	got := MergePods(server, local, []string{"hp-a", "hp-b", "hp-c"})
	if len(got) != 3 || got[0].Name != "hp-a" || got[1].Name != "hp-b" || got[2].Name != "hp-c" {
		t.Fatalf("pods = %+v", got)
	}
	if got[1].Checksum != "new" || got[1].LastReloadTime == nil || !got[1].LastReloadTime.Equal(&reload) {
		t.Errorf("hp-b = %+v: local wins, keeping the server's last reload", got[1])
	}
	if got[2].Checksum != "old" {
		t.Errorf("hp-c = %+v: a pod without local news keeps the server's entry", got[2])
	}
	// Unknown pod set: nothing is dropped.
	if got := MergePods(server, local, nil); len(got) != 4 {
		t.Errorf("without a pod list: %d pods, want 4", len(got))
	}
	// No pods left.
	if got := MergePods(server, local, []string{}); got != nil {
		t.Errorf("no pods: %+v", got)
	}
}

func TestEqualStatusReadBack(t *testing.T) {
	// What was written compares equal to what is read back (times in seconds, UTC).
	now := time.Date(2026, 5, 6, 7, 8, 9, 123, time.FixedZone("X", 3600))
	p := ApplyOutcome(v1alpha1.HAProxyCfgPodStatus{}, deploy.Outcome{Pod: "hp", Hash: "h", Mode: deploy.ModeReload, Reloaded: true}, now)
	want := v1alpha1.HAProxyCfgStatus{ObservedGeneration: 2, Pods: []v1alpha1.HAProxyCfgPodStatus{p}}
	var back v1alpha1.HAProxyCfgStatus
	if err := remarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if !EqualStatus(want, back) {
		t.Fatalf("status changed in a round trip: %+v vs %+v", want, back)
	}
	back.Pods[0].LastOperation = "runtime"
	if EqualStatus(want, back) {
		t.Fatal("different statuses compare equal")
	}
}
