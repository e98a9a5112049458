package render

import (
	"github.com/open2b/scriggo/native"
	"sort"
	"sync"
	"time"
)

// traceVar is the variable that profiling builds call into around every include.
const traceVar = "_haptic_trace"

// Timing is how long one top-level template took to render.
type Timing struct {
	Target   string        `json:"target"`
	Duration time.Duration `json:"duration"`
	// Shared is the part of Duration spent computing values the templates share
	// (shared.ComputeIfAbsent factories this target was the first to ask for).
	Shared time.Duration `json:"shared,omitempty"`
}

// Call is one include in the call tree of a render.
type Call struct {
	Name     string        `json:"name"`
	Duration time.Duration `json:"duration"`
	Calls    []*Call       `json:"calls,omitempty"`
}

type tracerKey struct{}

// traceHook is the `_haptic_trace` global of profiling builds. Top-level templates
// render in parallel, so each finds its own Tracer in the run's context.
type traceHook struct{}

// Enter starts timing an include.
func (traceHook) Enter(env native.Env, name string) string {
	if t, ok := env.Context().Value(tracerKey{}).(*Tracer); ok {
		t.enter(name)
	}
	return ""
}

// Exit ends the innermost include.
func (traceHook) Exit(env native.Env) string {
	if t, ok := env.Context().Value(tracerKey{}).(*Tracer); ok {
		t.exit()
	}
	return ""
}

// Tracer records the include call tree of one top-level template. Profiling builds
// call Enter and Exit around each `render`; both print nothing.
type Tracer struct {
	root  Call
	stack []*Call
	start []time.Time
}

func newTracer(target string) *Tracer {
	t := &Tracer{root: Call{Name: target}}
	t.stack = []*Call{&t.root}
	return t
}

func (t *Tracer) enter(name string) {
	c := &Call{Name: name}
	parent := t.stack[len(t.stack)-1]
	parent.Calls = append(parent.Calls, c)
	t.stack = append(t.stack, c)
	t.start = append(t.start, time.Now())
}

func (t *Tracer) exit() {
	if len(t.start) == 0 {
		return
	}
	n := len(t.start) - 1
	t.stack[len(t.stack)-1].Duration = time.Since(t.start[n])
	t.start = t.start[:n]
	t.stack = t.stack[:len(t.stack)-1]
}

// IncludeStat aggregates every call of one include.
type IncludeStat struct {
	Name  string        `json:"name"`
	Count int           `json:"count"`
	Total time.Duration `json:"total"`
	Max   time.Duration `json:"max"`
}

// Profile is the include call trees of one render.
type Profile struct {
	mu    sync.Mutex
	Trees []*Call `json:"trees"`
}

func (p *Profile) add(c *Call) {
	p.mu.Lock()
	p.Trees = append(p.Trees, c)
	p.mu.Unlock()
}

// Stats aggregates calls by include name, slowest total first.
func (p *Profile) Stats() []IncludeStat {
	by := map[string]*IncludeStat{}
	var walk func(c *Call)
	walk = func(c *Call) {
		for _, ch := range c.Calls {
			s := by[ch.Name]
			if s == nil {
				s = &IncludeStat{Name: ch.Name}
				by[ch.Name] = s
			}
			s.Count++
			s.Total += ch.Duration
			s.Max = max(s.Max, ch.Duration)
			walk(ch)
		}
	}
	for _, t := range p.Trees {
		walk(t)
	}
	out := make([]IncludeStat, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Total != out[j].Total {
			return out[i].Total > out[j].Total
		}
		return out[i].Name < out[j].Name
	})
	return out
}
