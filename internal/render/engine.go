package render

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/open2b/scriggo"
	"github.com/open2b/scriggo/native"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// WellKnownContextKeys are always declared as top-level variables (nil when unset), so
// templates can write fallback(maxconn, 2000) whether or not extraContext sets it.
var WellKnownContextKeys = []string{
	"debug", "httpPort", "httpsPort", "statusPort", "maxconn", "nbthread", "bufsize",
	"hardStopAfter", "default_ssl_cert_namespace", "default_ssl_cert_name",
	"ingressClass", "gatewayClass", "allowRawSnippets",
}

// Options configure compilation.
type Options struct {
	// Types are the struct types of watched resources (nil: no schema), for the typed dialect.
	Types map[string]reflect.Type
	// ExtraKeys are additional extraContext keys to declare (e.g. from validation tests).
	ExtraKeys []string
	// Capabilities of the target HAProxy, exposed as `capabilities`.
	Capabilities map[string]bool
	// ProfileIncludes builds templates that record the include call tree.
	ProfileIncludes bool
}

// Engine is a compiled config. Render may be called concurrently.
type Engine struct {
	spec      *v1alpha1.HAProxyTemplateConfigSpec
	layout    bundle.Layout
	mains     []mainTemplate
	typed     *typedRoot
	resources []string
	extraKeys []string
	baseExtra map[string]any
	resolver  *PathResolver
	opts      Options
	sources   map[string]source
}

type mainTemplate struct {
	file bundle.File // kind and name, no content
	tmpl *scriggo.Template
	post []postProcessor
}

// LayoutOf returns where the config places files on the HAProxy pods.
func LayoutOf(spec *v1alpha1.HAProxyTemplateConfigSpec) bundle.Layout {
	d := spec.Dataplane
	return bundle.Layout{ConfigFile: d.ConfigFile, MapsDir: d.MapsDir, SSLCertsDir: d.SSLCertsDir, GeneralStorageDir: d.GeneralStorageDir}
}

// ExtraContext decodes templatingSettings.extraContext.
func ExtraContext(raw []byte) (map[string]any, error) {
	out := map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return out, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("extraContext must be an object: %w", err)
	}
	return out, nil
}

// Compile compiles every template of a defaulted, validated spec.
func Compile(spec *v1alpha1.HAProxyTemplateConfigSpec, opts Options) (*Engine, error) {
	e := &Engine{spec: spec, layout: LayoutOf(spec), opts: opts, sources: map[string]source{}}
	e.resolver = &PathResolver{layout: e.layout}
	var err error
	if spec.TemplatingSettings.ExtraContext != nil {
		if e.baseExtra, err = ExtraContext(spec.TemplatingSettings.ExtraContext.Raw); err != nil {
			return nil, fmt.Errorf("spec.templatingSettings.extraContext: %w", err)
		}
	} else {
		e.baseExtra = map[string]any{}
	}
	for name := range spec.WatchedResources {
		e.resources = append(e.resources, name)
	}
	sort.Strings(e.resources)
	if spec.TemplatingSettings.ResourceAccess != v1alpha1.AccessUntyped {
		types := map[string]reflect.Type{}
		for _, n := range e.resources {
			types[n] = opts.Types[n]
		}
		if e.typed, err = newTypedRoot(types); err != nil {
			return nil, err
		}
	}
	decls, err := e.declarations()
	if err != nil {
		return nil, err
	}
	fsys, err := e.fileSystem()
	if err != nil {
		return nil, err
	}
	for _, m := range e.mainSpecs() {
		post, err := compilePostProcessors(m.pp)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.file.Target(), err)
		}
		path := mainPath(string(m.file.Kind), m.file.Name)
		tmpl, err := scriggo.BuildTemplate(fsys, path, &scriggo.BuildOptions{Globals: decls})
		if err != nil {
			return nil, e.describe(m.file.Target(), err)
		}
		e.mains = append(e.mains, mainTemplate{file: m.file, tmpl: tmpl, post: post})
	}
	return e, nil
}

type mainSpec struct {
	file bundle.File
	text string
	pp   []v1alpha1.PostProcessor
}

func (e *Engine) mainSpecs() []mainSpec {
	s := e.spec
	out := []mainSpec{{file: bundle.File{Kind: bundle.KindConfig, Name: "haproxy.cfg"}, text: s.HAProxyConfig.Template, pp: s.HAProxyConfig.PostProcessing}}
	add := func(kind bundle.Kind, files map[string]v1alpha1.GeneratedFile) {
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, mainSpec{file: bundle.File{Kind: kind, Name: n}, text: files[n].Template, pp: files[n].PostProcessing})
		}
	}
	add(bundle.KindMap, s.Maps)
	add(bundle.KindFile, s.Files)
	add(bundle.KindCert, s.SSLCertificates)
	add(bundle.KindCrtList, s.CrtLists)
	return out
}

func (e *Engine) fileSystem() (scriggo.Files, error) {
	ordered := sortedSnippets(e.spec.TemplateSnippets)
	known := make(map[string]bool, len(ordered))
	for _, s := range ordered {
		known[s.name] = true
	}
	fsys := scriggo.Files{}
	add := func(path, display, text string) error {
		pre, err := preprocess(text, ordered, known, e.opts.ProfileIncludes)
		if err != nil {
			return fmt.Errorf("%s: %w", display, err)
		}
		fsys[path] = []byte(pre)
		e.sources[path] = source{path: path, display: display, text: text}
		return nil
	}
	for _, s := range ordered {
		// A snippet's output always ends a line, so snippets included one after another
		// (render_glob) never run into each other.
		text := strings.TrimRight(e.spec.TemplateSnippets[s.name].Template, "\n") + "\n"
		if err := add(snippetPath(s.name), "snippet "+s.name, text); err != nil {
			return nil, err
		}
	}
	for _, m := range e.mainSpecs() {
		display := m.file.Target()
		if err := add(mainPath(string(m.file.Kind), m.file.Name), display, m.text); err != nil {
			return nil, err
		}
	}
	return fsys, nil
}

// reservedNames are globals that extraContext keys must not shadow.
var reservedNames = []string{"resources", "extraContext", "shared", "fileRegistry", "pathResolver",
	"dataplane", "capabilities", "templateSnippets", "runtimeEnvironment", "currentConfig", traceVar}

func (e *Engine) declarations() (native.Declarations, error) {
	decls := builtins()
	for _, n := range reservedNames {
		decls[n] = nil
	}
	keys := map[string]bool{}
	for _, k := range WellKnownContextKeys {
		keys[k] = true
	}
	for k := range e.baseExtra {
		keys[k] = true
	}
	for _, k := range e.opts.ExtraKeys {
		keys[k] = true
	}
	for k := range keys {
		if _, clash := decls[k]; clash {
			return nil, fmt.Errorf("spec.templatingSettings.extraContext.%s: the key shadows a built-in template name", k)
		}
		if ExportedName(k) == "" || !validIdentifier(k) {
			continue // not addressable as a variable; still reachable through extraContext
		}
		e.extraKeys = append(e.extraKeys, k)
		decls[k] = (*any)(nil)
	}
	sort.Strings(e.extraKeys)
	if e.typed != nil {
		decls["resources"] = reflect.Zero(reflect.PointerTo(e.typed.typ)).Interface()
	} else {
		decls["resources"] = (*map[string]*UntypedStore)(nil)
	}
	decls["extraContext"] = (*map[string]any)(nil)
	decls["shared"] = (**Shared)(nil)
	decls["fileRegistry"] = (**FileRegistry)(nil)
	decls["pathResolver"] = &e.resolver
	dp := e.spec.Dataplane
	decls["dataplane"] = &dp
	caps := e.opts.Capabilities
	if caps == nil {
		caps = map[string]bool{}
	}
	decls["capabilities"] = &caps
	names := make([]string, 0, len(e.spec.TemplateSnippets))
	for _, s := range sortedSnippets(e.spec.TemplateSnippets) {
		names = append(names, s.name)
	}
	decls["templateSnippets"] = &names
	env := struct{ GOMAXPROCS int }{runtime.GOMAXPROCS(0)}
	decls["runtimeEnvironment"] = &env
	decls["currentConfig"] = (*any)(nil)
	decls[traceVar] = (**Tracer)(nil)
	return decls, nil
}

func validIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')) {
			return false
		}
	}
	return s != ""
}

// Input is what one render reads.
type Input struct {
	Snapshot *snapshot.Snapshot
	// ExtraContext overrides keys of the spec's extraContext.
	ExtraContext map[string]any
	// CurrentConfig is what runs now, if known (for templates that keep server slots).
	CurrentConfig any
}

// Result is a render's output.
type Result struct {
	Bundle  *bundle.Bundle
	Timings []Timing
	Profile *Profile
}

// runState is per-render state that native functions reach through the context.
type runState struct {
	mu   sync.Mutex
	seen map[string]bool
	// at is the last line marker a diagnostic build passed (template and line).
	atTemplate string
	atLine     int
}

type stateKey struct{}

func stateOf(env native.Env) *runState {
	if st, ok := env.Context().Value(stateKey{}).(*runState); ok {
		return st
	}
	panic("render state missing from context")
}

// Render runs every template. Templates run in parallel; the output is deterministic.
// A runtime error is diagnosed before it is returned: the failing line and, where one
// object causes it, that object are named.
func (e *Engine) Render(ctx context.Context, in Input) (*Result, error) {
	if in.Snapshot == nil {
		in.Snapshot = &snapshot.Snapshot{Stores: map[string]*snapshot.Store{}}
	}
	ctx, vars, registry := e.runVars(ctx, in)
	res := &Result{Timings: make([]Timing, len(e.mains))}
	if e.opts.ProfileIncludes {
		res.Profile = &Profile{}
	}
	outputs := make([]bundle.File, len(e.mains))
	errs := make([]error, len(e.mains))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range e.mains {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			outputs[i], res.Timings[i], errs[i] = e.renderOne(ctx, e.mains[i], vars, res.Profile)
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, e.diagnose(ctx, e.mains[i], in, err)
		}
	}
	files := append(outputs, registry.list()...)
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f.Target()] {
			return nil, fmt.Errorf("%s is both declared in the config and registered by a template", f.Target())
		}
		seen[f.Target()] = true
	}
	res.Bundle = bundle.New(files)
	return res, nil
}

// runVars builds the variables of one render; every template of the render shares them.
func (e *Engine) runVars(ctx context.Context, in Input) (context.Context, map[string]any, *FileRegistry) {
	extra := make(map[string]any, len(e.baseExtra)+len(in.ExtraContext))
	for k, v := range e.baseExtra {
		extra[k] = v
	}
	for k, v := range in.ExtraContext {
		extra[k] = v
	}
	registry := newFileRegistry(e.resolver)
	ctx = context.WithValue(ctx, stateKey{}, &runState{seen: map[string]bool{}})
	vars := map[string]any{
		"extraContext": extra,
		"shared":       newShared(),
		"fileRegistry": registry,
	}
	if e.typed != nil {
		vars["resources"] = e.typed.value(in.Snapshot).Interface()
	} else {
		vars["resources"] = untypedValue(e.resources, in.Snapshot)
	}
	current := in.CurrentConfig
	vars["currentConfig"] = &current
	for _, k := range e.extraKeys {
		v := extra[k]
		vars[k] = &v
	}
	return ctx, vars, registry
}

func (e *Engine) renderOne(ctx context.Context, m mainTemplate, shared map[string]any, profile *Profile) (bundle.File, Timing, error) {
	vars := make(map[string]any, len(shared)+1)
	for k, v := range shared {
		vars[k] = v
	}
	var tracer *Tracer
	if profile != nil {
		tracer = newTracer(m.file.Target())
		vars[traceVar] = tracer
	}
	start := time.Now()
	var buf bytes.Buffer
	err := m.tmpl.Run(&buf, vars, &scriggo.RunOptions{Context: ctx})
	took := time.Since(start)
	timing := Timing{Target: m.file.Target(), Duration: took}
	if err != nil {
		return bundle.File{}, timing, e.describe(m.file.Target(), err)
	}
	if tracer != nil {
		tracer.root.Duration = took
		profile.add(&tracer.root)
	}
	out := normalize(m.file.Kind, buf.String())
	for _, p := range m.post {
		out = p.apply(out)
	}
	f := m.file
	f.Content = out
	return f, timing, nil
}

// Targets lists the top-level templates in render order (haproxy.cfg, maps, ...).
func (e *Engine) Targets() []string {
	out := make([]string, len(e.mains))
	for i, m := range e.mains {
		out[i] = m.file.Target()
	}
	return out
}
