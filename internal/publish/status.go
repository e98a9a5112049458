package publish

import (
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/deploy"
)

// maxErrorLen bounds an error message kept in the status.
const maxErrorLen = 512

// Summary describes an apply in a few words: "runtime: 3 operations", "reload:
// backend be_x: added (+2 more)", "reload: full apply", "reload: runtime
// operations failed". A runtime apply without a count (Ops 0) is just "runtime".
func Summary(o deploy.Outcome) string {
	switch {
	case o.Mode == deploy.ModeRuntime && o.FastPathFailed:
		return "reload: runtime operations failed"
	case o.Mode == deploy.ModeRuntime && o.Ops == 1:
		return "runtime: 1 operation"
	case o.Mode == deploy.ModeRuntime && o.Ops > 1:
		return fmt.Sprintf("runtime: %d operations", o.Ops)
	case o.Mode == deploy.ModeRuntime:
		return "runtime"
	case len(o.Reasons) > 0:
		s := "reload: " + o.Reasons[0].String()
		if n := len(o.Reasons) - 1; n > 0 {
			s += fmt.Sprintf(" (+%d more)", n)
		}
		return s
	case o.Reloaded:
		return "reload: full apply"
	default:
		return "full apply: no reload needed"
	}
}

// ApplyOutcome records an apply in a pod's status. A failed apply keeps the checksum
// the pod last accepted.
func ApplyOutcome(p v1alpha1.HAProxyCfgPodStatus, o deploy.Outcome, now time.Time) v1alpha1.HAProxyCfgPodStatus {
	p.Name = o.Pod
	p.LastOperation = Summary(o)
	if o.Err != nil {
		p.LastError = truncate(o.Err.Error(), maxErrorLen)
		return p
	}
	p.LastError = ""
	p.Checksum = o.Hash
	if o.Reloaded {
		// The API keeps seconds; truncating here keeps comparisons with what was read back exact.
		t := metav1.NewTime(now.UTC().Truncate(time.Second))
		p.LastReloadTime = &t
	}
	return p
}

// MergePods combines the pods of the status on the server with what this publisher
// saw. Local entries win, but keep the server's last reload time when they have
// none (the controller restarted since). When current is not nil, only pods named
// in it are kept. The result is sorted by name.
func MergePods(server []v1alpha1.HAProxyCfgPodStatus, local map[string]v1alpha1.HAProxyCfgPodStatus, current []string) []v1alpha1.HAProxyCfgPodStatus {
	keep := func(string) bool { return true }
	if current != nil {
		set := make(map[string]bool, len(current))
		for _, n := range current {
			set[n] = true
		}
		keep = func(n string) bool { return set[n] }
	}
	byName := map[string]v1alpha1.HAProxyCfgPodStatus{}
	for _, p := range server {
		if keep(p.Name) {
			byName[p.Name] = p
		}
	}
	for name, p := range local {
		if !keep(name) {
			continue
		}
		if old, ok := byName[name]; ok && p.LastReloadTime == nil {
			p.LastReloadTime = old.LastReloadTime
		}
		byName[name] = p
	}
	out := make([]v1alpha1.HAProxyCfgPodStatus, 0, len(byName))
	for _, p := range byName {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		return nil
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
