package deploy

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/plan"
)

// planMemo shares one plan among the workers of pods that run the same set: a
// fleet's pods normally do, and plan.Plan is pure, so the second pod's delivery
// starts without planning again. It keeps the latest key only.
type planMemo struct {
	mu    sync.Mutex
	key   string
	entry *memoEntry
}

type memoEntry struct {
	once  sync.Once
	res   plan.Result
	whole []bundle.File
	edits []agentapi.FileEdit
}

// get returns the plan from running to desired under caps (and the changed files
// split into whole files and edits of running's), computing it once per key.
func (m *planMemo) get(running plan.Running, desired *bundle.Bundle, caps plan.Capabilities) *memoEntry {
	key := memoKey(running, desired, caps)
	m.mu.Lock()
	if m.entry == nil || m.key != key {
		m.key, m.entry = key, &memoEntry{}
	}
	e := m.entry
	m.mu.Unlock()
	e.once.Do(func() {
		e.res = plan.Plan(running, desired, caps)
		if !e.res.Reload && running.Bundle != nil {
			e.whole, e.edits = asEdits(running.Bundle, e.res.Files)
		}
	})
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
