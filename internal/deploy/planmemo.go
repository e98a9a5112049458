package deploy

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/plan"
)

// planMemo shares one plan among the workers of pods that run the same set (a
// fleet's pods normally do: plan.Plan is pure, so the second pod's delivery
// starts without planning again), and plans made ahead (Deployer.Prepare) for the
// deliveries that ask for them later. It keeps the latest memoSize keys, less the
// plans the pods have carried out: once a plan starts from what one made to run,
// that one holds a configuration (its placed haproxy.cfg, its edits) nobody asks
// for again (a pod left behind plans again).
type planMemo struct {
	mu      sync.Mutex
	entries []*memoEntry // oldest first
}

// memoSize bounds the plans kept: one a delivery is sending, one made ahead for
// the next, and room for pods that run different sets.
const memoSize = 4

type memoEntry struct {
	key  string
	once sync.Once
	res  plan.Result
	// runs is the hash of what the pod runs once res is applied ("" with a reload,
	// or until res is made); under planMemo.mu.
	runs  string
	whole []bundle.File
	edits []agentapi.FileEdit
	// ahead: made by prepare, before a delivery asked for it.
	ahead bool
}

// get returns the plan from running to desired under caps (and the changed files
// split into whole files and edits of running's), computing it once per key;
// ahead reports a plan prepare made before a delivery asked for it.
func (m *planMemo) get(running plan.Running, desired *bundle.Bundle, caps plan.Capabilities) (e *memoEntry, ahead bool) {
	e = m.entry(memoKey(running, desired, caps), false, running.Bundle)
	m.compute(e, running, desired, caps)
	return e, e.ahead
}

// prepare reserves get's plan before a delivery asks for it and returns the
// function that makes it: a delivery that asks meanwhile waits for that plan
// instead of making its own.
func (m *planMemo) prepare(running plan.Running, desired *bundle.Bundle, caps plan.Capabilities) (compute func()) {
	e := m.entry(memoKey(running, desired, caps), true, running.Bundle)
	return func() { m.compute(e, running, desired, caps) }
}

// compute makes e's plan once.
func (m *planMemo) compute(e *memoEntry, running plan.Running, desired *bundle.Bundle, caps plan.Capabilities) {
	e.once.Do(func() {
		e.res = plan.Plan(running, desired, caps)
		if !e.res.Reload && running.Bundle != nil {
			e.whole, e.edits = asEdits(running.Bundle, e.res.Files)
		}
		if r := e.res.Running; r != nil && r.Bundle != nil {
			m.mu.Lock()
			e.runs = r.Bundle.Hash
			m.mu.Unlock()
		}
	})
}

// entry returns key's entry, new (marked ahead when ahead) if there is none; a new
// plan from running drops the plans that made running.
func (m *planMemo) entry(key string, ahead bool, running *bundle.Bundle) *memoEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.entries {
		if e.key == key {
			return e
		}
	}
	if running != nil && running.Hash != "" {
		m.entries = slices.DeleteFunc(m.entries, func(e *memoEntry) bool { return e.runs == running.Hash })
	}
	if len(m.entries) == memoSize {
		m.entries = slices.Delete(m.entries, 0, 1)
	}
	e := &memoEntry{key: key, ahead: ahead}
	m.entries = append(m.entries, e)
	return e
}

func memoKey(running plan.Running, desired *bundle.Bundle, caps plan.Capabilities) string {
	var b strings.Builder
	if running.Bundle != nil {
		b.WriteString(running.Bundle.Hash)
	}
	b.WriteString("|" + desired.Hash + "|")
	fmt.Fprintf(&b, "%+v", caps)
	names := make([]string, 0, len(running.Aliases))
	for k := range running.Aliases {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		b.WriteString("|" + k + "=" + running.Aliases[k])
	}
	return b.String()
}
