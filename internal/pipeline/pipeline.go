package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"sync"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/note"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/schema"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/store"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

// SchemaDirEnv names the environment variable that supplies --schema-dir.
const SchemaDirEnv = "HAPTIC_SCHEMA_DIR"

// Options configure a pipeline.
type Options struct {
	// SchemaDir holds extra OpenAPI v3 documents or CRDs for typed access.
	SchemaDir       string
	ProfileIncludes bool
}

// Pipeline is a compiled config.
type Pipeline struct {
	Config  *v1alpha1.HAProxyTemplateConfig
	Builder *store.Builder
	// Engine is the first compiled engine; Render may use more.
	Engine *render.Engine
	Layout bundle.Layout

	// An engine renders one snapshot at a time, so parallel test workers borrow
	// engines from a pool that grows to GOMAXPROCS compiled copies.
	compile func() (*render.Engine, error)
	idle    chan *render.Engine
	mu      sync.Mutex
	made    int
}

// Registry returns the bundled schemas plus those in dir.
func Registry(dir string) (*schema.Registry, error) {
	reg, err := schema.Bundled()
	if err != nil {
		return nil, fmt.Errorf("load bundled schemas: %w", err)
	}
	if dir != "" {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("schema dir: %w", err)
		}
		if err := reg.LoadDir(dir); err != nil {
			return nil, fmt.Errorf("load schemas from %s: %w", dir, err)
		}
	}
	return reg, nil
}

// New compiles a defaulted, validated config.
func New(cfg *v1alpha1.HAProxyTemplateConfig, opts Options) (*Pipeline, error) {
	reg, err := Registry(opts.SchemaDir)
	if err != nil {
		return nil, err
	}
	b, err := store.NewBuilder(&cfg.Spec, reg)
	if err != nil {
		return nil, err
	}
	b.Prepare = render.PrepareForms
	keys, err := testContextKeys(cfg)
	if err != nil {
		return nil, err
	}
	compile := func() (*render.Engine, error) {
		return render.Compile(&cfg.Spec, render.Options{
			Types: b.Types(), ExtraKeys: keys, ProfileIncludes: opts.ProfileIncludes,
		})
	}
	eng, err := compile()
	if err != nil {
		return nil, err
	}
	p := &Pipeline{Config: cfg, Builder: b, Engine: eng, Layout: render.LayoutOf(&cfg.Spec),
		compile: compile, idle: make(chan *render.Engine, runtime.GOMAXPROCS(0)), made: 1}
	p.idle <- eng
	return p, nil
}

// borrow returns an idle engine, compiling another while fewer than GOMAXPROCS exist.
func (p *Pipeline) borrow() (*render.Engine, error) {
	select {
	case e := <-p.idle:
		return e, nil
	default:
	}
	p.mu.Lock()
	grow := p.made < cap(p.idle)
	if grow {
		p.made++
	}
	p.mu.Unlock()
	if !grow {
		return <-p.idle, nil
	}
	e, err := p.compile()
	if err != nil {
		p.mu.Lock()
		p.made--
		p.mu.Unlock()
		return nil, err
	}
	return e, nil
}

// testContextKeys are the extraContext keys any validation test sets; they are
// declared at compile time so every test can be rendered by one compiled engine.
func testContextKeys(cfg *v1alpha1.HAProxyTemplateConfig) ([]string, error) {
	set := map[string]bool{}
	for name, t := range cfg.Spec.ValidationTests {
		if t.ExtraContext == nil {
			continue
		}
		extra, err := render.ExtraContext(t.ExtraContext.Raw)
		if err != nil {
			return nil, fmt.Errorf("spec.validationTests[%s].extraContext: %w", name, err)
		}
		for k := range extra {
			set[k] = true
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}

// Fixture is a validation test's input, decoded.
type Fixture struct {
	Snapshot     *snapshot.Snapshot
	ExtraContext map[string]any
}

// Fixtures decodes and admits a test's fixtures. The test must already have the
// _global test merged in (validate.MergeGlobal).
func (p *Pipeline) Fixtures(name string, t v1alpha1.ValidationTest) (*Fixture, error) {
	raw := map[string][]map[string]any{}
	for res, objs := range t.Fixtures {
		for i, o := range objs {
			var m map[string]any
			if err := json.Unmarshal(o.Raw, &m); err != nil {
				return nil, fmt.Errorf("validationTests[%s].fixtures[%s][%d]: %w", name, res, i, err)
			}
			raw[res] = append(raw[res], m)
		}
	}
	snap, err := p.Builder.Snapshot(raw)
	if err != nil {
		return nil, fmt.Errorf("validationTests[%s].fixtures: %w", name, err)
	}
	extra := map[string]any{}
	if t.ExtraContext != nil {
		if extra, err = render.ExtraContext(t.ExtraContext.Raw); err != nil {
			return nil, fmt.Errorf("validationTests[%s].extraContext: %w", name, err)
		}
	}
	return &Fixture{Snapshot: snap, ExtraContext: extra}, nil
}

// Render renders a fixture.
func (p *Pipeline) Render(ctx context.Context, f *Fixture) (*render.Result, error) {
	return p.RenderInput(ctx, render.Input{Snapshot: f.Snapshot, ExtraContext: f.ExtraContext})
}

// RenderInput renders in with an idle engine; callers may render concurrently.
func (p *Pipeline) RenderInput(ctx context.Context, in render.Input) (*render.Result, error) {
	e, err := p.borrow()
	if err != nil {
		return nil, err
	}
	defer func() { p.idle <- e }()
	return e.Render(ctx, in)
}

// NewEngine compiles an engine of its own for the caller (outside the pool), e.g. to
// keep what its renders memoize.
func (p *Pipeline) NewEngine() (*render.Engine, error) { return p.compile() }

// NewVersion returns snap with obj of resource replaced by a new version of itself:
// the same content admitted again, a new object to the engine.
func (p *Pipeline) NewVersion(snap *snapshot.Snapshot, resource string, obj snapshot.Object) (*snapshot.Snapshot, error) {
	raw, err := json.Marshal(obj.Raw)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	o, _, err := p.Builder.Admit(resource, m)
	if err != nil {
		return nil, err
	}
	one := &snapshot.Snapshot{Stores: map[string]*snapshot.Store{resource: p.Builder.NewStore(resource, []snapshot.Object{o})}}
	return snap.Revert(one, snapshot.Ref{Resource: resource, Key: o.Key()}), nil
}

// Observer sees every successful test render, e.g. to dump or trace it.
type Observer func(test string, res *render.Result)

// RenderFunc adapts the pipeline to the validation-test runner.
func (p *Pipeline) RenderFunc(observe Observer) validate.RenderFunc {
	return func(ctx context.Context, name string, t v1alpha1.ValidationTest) (*bundle.Bundle, map[string]any, error) {
		f, err := p.Fixtures(name, t)
		if err != nil {
			return nil, nil, err
		}
		doc := map[string]any{"resources": fixtureObjects(t), "extraContext": f.ExtraContext}
		res, err := p.Render(ctx, f)
		if err != nil {
			return nil, doc, err
		}
		if observe != nil {
			observe(name, res)
		}
		if doc["notes"], err = notesDoc(res.Notes); err != nil {
			return nil, doc, err
		}
		return res.Bundle, doc, nil
	}
}

// fixtureObjects are a test's fixture objects per resource as the jsonpath context
// holds them: a copy of their own, decoded apart from the admitted ones (a render
// may keep those; `haptic benchmark` needs none of these).
func fixtureObjects(t v1alpha1.ValidationTest) map[string]any {
	out := make(map[string]any, len(t.Fixtures))
	for res, objs := range t.Fixtures {
		list := make([]any, len(objs))
		for i, o := range objs {
			var m map[string]any
			_ = json.Unmarshal(o.Raw, &m) // (Fixtures decoded it without an error)
			list[i] = m
		}
		out[res] = list
	}
	return out
}

// notesDoc is the notes as the context document holds them: JSON objects.
func notesDoc(notes []note.Note) ([]any, error) {
	data, err := json.Marshal(notes)
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	var out []any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	return out, nil
}
