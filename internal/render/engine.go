package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open2b/scriggo"
	"github.com/open2b/scriggo/native"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/note"
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
	baseExtra map[string]any
	resolver  *PathResolver
	opts      Options
	sources   map[string]source

	snippetNames []string
	runtimeEnv   struct{ GOMAXPROCS int }

	mu    sync.Mutex   // one render at a time: the globals below belong to it
	st    *renderState // the current render
	g     globals
	memos []*memo // what earlier renders can reuse, one per extraContext
	// indexing counts the renders whose fragments' indexes are being made
	// (indexMemo): a render that may reuse fragments waits for them.
	indexing sync.WaitGroup
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
	for _, s := range sortedSnippets(spec.TemplateSnippets) {
		e.snippetNames = append(e.snippetNames, s.name)
	}
	e.runtimeEnv.GOMAXPROCS = runtime.GOMAXPROCS(0)
	e.g.extras = map[string]*any{}
	e.g.trace = &traceHook{}
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
		e.g.resources = e.typed.value(func() *renderState { return e.st })
	} else {
		e.g.untyped = map[string]*UntypedStore{}
		for _, n := range e.resources {
			e.g.untyped[n] = &UntypedStore{name: n, state: func() *renderState { return e.st }}
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
		tmpl, err := buildTemplate(fsys, path, decls)
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
		pre, err := preprocess(trimMarkers(text), ordered, known, e.opts.ProfileIncludes)
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
	"dataplane", "templateSnippets", "runtimeEnvironment", "currentConfig", traceVar, atFunc}

// globals is the storage behind the templates' global variables. Scriggo v0.60.0
// closures see a variable supplied at Run time as its zero value, so every global is
// declared initialised, pointing here, and Render refills the storage under the
// engine's lock: one render at a time per Engine (see Pool for parallel renders).
type globals struct {
	resources    reflect.Value // typed root struct (addressable), or invalid
	untyped      map[string]*UntypedStore
	extraContext map[string]any
	extras       map[string]*any
	shared       *Shared
	registry     *FileRegistry
	current      any
	trace        *traceHook
}

func (e *Engine) declarations() (native.Declarations, error) {
	decls := builtins()
	for k, v := range writers() {
		decls[k] = v
	}
	for k, v := range checkBuiltins() {
		decls[k] = v
	}
	for k, v := range mergeBuiltins() {
		decls[k] = v
	}
	for k, v := range e.gatewayBuiltins() {
		decls[k] = v
	}
	for k, v := range e.ingressBuiltins() {
		decls[k] = v
	}
	decls["first_seen"] = e.firstSeen
	decls["key_runs"] = e.keyRunsKept
	decls["service_servers"] = e.serviceServers
	decls["gateway_servers"] = e.gatewayServers
	decls["gateway_backend_servers"] = e.gatewayBackendServers
	decls["servers_ahead"] = e.serversAhead
	decls["backend_servers"] = e.backendServers
	decls["note"] = e.note
	for k, v := range e.unitDeclarations() {
		decls[k] = v
	}
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
		if !validIdentifier(k) {
			continue // not addressable as a variable; still reachable through extraContext
		}
		if _, ok := e.g.extras[k]; !ok {
			e.g.extras[k] = new(any)
		}
		decls[k] = e.g.extras[k]
	}
	if e.typed != nil {
		decls["resources"] = e.g.resources.Addr().Interface()
	} else {
		decls["resources"] = &e.g.untyped
	}
	decls["extraContext"] = &e.g.extraContext
	decls["shared"] = &e.g.shared
	decls["fileRegistry"] = &e.g.registry
	decls["pathResolver"] = &e.resolver
	decls["dataplane"] = &e.spec.Dataplane
	decls["templateSnippets"] = &e.snippetNames
	decls["runtimeEnvironment"] = &e.runtimeEnv
	decls["currentConfig"] = &e.g.current
	decls[traceVar] = &e.g.trace
	decls[atFunc] = e.at
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
	// LeaveOut renders without the objects that make the render fail: when an error
	// depends on one object, that object is left out and the render repeated (up to
	// MaxLeftOut objects). Without it the first error is returned.
	LeaveOut bool
	// Suspects are the objects most likely to cause an error (those changed since the
	// last good render); they are tried before bisecting every store.
	Suspects []snapshot.Ref
	// Fallback is the snapshot of the last good render: an object left out is held
	// as it was there (its last good version keeps serving) before it is dropped.
	Fallback *snapshot.Snapshot
	// Fresh renders every fragment anew instead of reusing what earlier renders with
	// the same extraContext memoized (see memo.go); the output is the same either way.
	Fresh bool
}

// keptNote ends the reason of an object whose last good version is rendered instead.
const keptNote = "; its last good version keeps serving"

// MaxLeftOut bounds how many objects one render leaves out before it gives up: more
// failing objects than that are not one bad object, and the last good config stays.
const MaxLeftOut = 16

// Result is a render's output.
type Result struct {
	Bundle  *bundle.Bundle
	Timings []Timing
	// Shared times the shared values computed (by key, in order): the work the
	// first target to ask for each did for all.
	Shared  []Timing
	Profile *Profile
	// LeftOut are the objects the templates did not see: refused when they were
	// stored, or left out because the render failed with them (Input.LeaveOut).
	LeftOut []snapshot.LeftOut
	// Snapshot is what was rendered: the input with left-out objects reverted to
	// their Fallback version or removed.
	Snapshot *snapshot.Snapshot
	// Notes are what the templates said about objects with note(), sorted; they are
	// not in the bundle.
	Notes []note.Note
	// Reuse counts the fragments taken from earlier renders and those rendered.
	Reuse Reuse
	// StoresRead names every store the templates queried (nil: not recorded, as in
	// a profiled render). A snapshot that differs from this render's only in other
	// stores renders to the same bundle.
	StoresRead map[string]bool
}

// Reuse counts fragments of an incremental render.
type Reuse struct {
	Files, Units, Shared                         int // reused
	FilesRendered, UnitsRendered, SharedComputed int // rendered anew
	ServersAhead                                 int // backends' server lines read ahead (servers_ahead)
}

// renderState is what the current render's native helpers read.
type renderState struct {
	snapshot *snapshot.Snapshot
	mu       sync.Mutex
	seen     map[string]bool
	notes    noteBook
	// rec follows the fragments of the template being rendered (nil: not recorded);
	// prev is what earlier renders memoized (nil: reuse nothing), next what this one
	// leaves for later renders.
	rec        *recorder
	out        *output // what the template being rendered writes (map_text holds texts in it)
	prev, next *memo
	// kept is what the libraries' Go helpers keep between the renders of one
	// extraContext (carried from memo to memo: the live fleet's and the admission
	// webhook's renders alternate on one engine).
	kept    *libraryCaches
	reuse   Reuse
	extra   map[string]any
	files   *FileRegistry
	changed map[[2]*snapshot.Store]map[string]bool
	// lastChanged is the entry of changed used last.
	lastChanged struct {
		k [2]*snapshot.Store
		c map[string]bool
	}
	// gen numbers the render (renderGen): deps remember which render checked them.
	gen uint64
	// madeDeps are the fragments' deps this render recorded (indexMemo).
	madeDeps []*deps
	// recent are the template's last recorded store queries (reader.fetch).
	recent recentReads
	// ahead reads server lines ahead of service_servers (serversahead.go); listed
	// is the last servers_ahead call's list (backend_servers).
	ahead  *serversAhead
	listed *listedBackends
	// gatewayListed is the last gateway_backend_runs call's list
	// (gateway_backend_servers).
	gatewayListed []*GatewayBackend
	// atTemplate and atLine are the last line marker a diagnostic build passed.
	atTemplate string
	atLine     int
}

// renderGen counts renders across engines (a deps is only ever checked by its own
// engine's renders, which are serialised).
var renderGen atomic.Uint64

func (e *Engine) firstSeen(key ...string) bool {
	st := e.st
	k := strings.Join(key, "\x00")
	st.mu.Lock()
	first := !st.seen[k]
	st.seen[k] = true
	st.mu.Unlock()
	if st.rec != nil {
		d := &st.rec.top().deps
		d.marks = append(d.marks, mark{key: k, first: first})
	}
	return first
}

// replay applies what a reused fragment did to the render: its first_seen calls must
// answer as they did (else it is not reused: false), its files are registered and its notes made again.
func (st *renderState) replay(d *deps, registry *FileRegistry) bool {
	if len(d.marks) > 0 {
		st.mu.Lock()
		for i, m := range d.marks {
			if first := !st.seen[m.key]; first != m.first {
				for _, done := range d.marks[:i] { // undo what this replay marked
					if done.first {
						delete(st.seen, done.key)
					}
				}
				st.mu.Unlock()
				return false
			}
			st.seen[m.key] = true
		}
		st.mu.Unlock()
	}
	for _, f := range d.files {
		registry.put(f)
	}
	if len(d.notes) > 0 {
		st.mu.Lock()
		st.notes.notes = append(st.notes.notes, d.notes...)
		st.mu.Unlock()
	}
	return true
}

// Render runs every template. Templates run in parallel; the output is deterministic.
// A runtime error is diagnosed before it is returned: the failing line and, where one
// object causes it, that object are named. Renders of one Engine are serialised.
func (e *Engine) Render(ctx context.Context, in Input) (*Result, error) {
	if in.Snapshot == nil {
		in.Snapshot = &snapshot.Snapshot{Stores: map[string]*snapshot.Store{}}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !in.Fresh {
		e.indexing.Wait() // (earlier renders' fragments are read from here on; a Fresh render reads none)
	}
	leftOut := in.Snapshot.LeftOut()
	if in.LeaveOut && in.Fallback != nil {
		var refs []snapshot.Ref
		for i, l := range leftOut {
			ref := snapshot.Ref{Resource: l.Resource, Key: l.Key}
			if o, ok := in.Fallback.Object(ref); ok && o.Refused == "" {
				refs = append(refs, ref)
				leftOut[i].Reason += keptNote
			}
		}
		in.Snapshot = in.Snapshot.Revert(in.Fallback, refs...)
	}
	tried := map[snapshot.Ref]int{} // → index in leftOut
	for {
		res, err := e.renderAll(ctx, in)
		if err == nil {
			res.LeftOut, res.Snapshot = leftOut, in.Snapshot
			return res, nil
		}
		var te *TemplateError
		if !in.LeaveOut || len(leftOut) >= MaxLeftOut || !errors.As(err, &te) || ctx.Err() != nil {
			return nil, err
		}
		resource, key, ok := te.Culprit()
		if !ok {
			return nil, err
		}
		ref := snapshot.Ref{Resource: resource, Key: key}
		if i, again := tried[ref]; again { // its last good version fails too: drop it
			leftOut[i].Reason = strings.TrimSuffix(leftOut[i].Reason, keptNote)
			in.Snapshot = in.Snapshot.Without(ref)
			continue
		}
		reason := te.Message
		fallback := in.Fallback
		if o, held := fallback.Object(ref); held && o.Refused == "" {
			reason += keptNote
		} else {
			fallback = nil
		}
		tried[ref] = len(leftOut)
		leftOut = append(leftOut, snapshot.LeftOut{Resource: resource, Key: key, Reason: reason})
		in.Snapshot = in.Snapshot.Revert(fallback, ref)
	}
}

// renderAll renders every template of in once; the caller holds e.mu. Templates
// render one after another: the store functions templates call cannot tell who calls
// them, and the render state records what the running template reads.
func (e *Engine) renderAll(ctx context.Context, in Input) (*Result, error) {
	e.begin(in)
	st := e.st
	if !e.opts.ProfileIncludes {
		st.next = newMemo(st.extra, in.CurrentConfig)
		last := e.memoFor(st.extra, in.CurrentConfig)
		st.next.sizeLike(last) // (a Fresh render reuses nothing of it but its sizes)
		if !in.Fresh {
			st.prev = last
			if st.prev != nil && st.prev.kept != nil {
				st.kept = st.prev.kept
			}
		}
		st.next.kept = st.kept
	}
	res := &Result{Timings: make([]Timing, len(e.mains))}
	if e.opts.ProfileIncludes {
		res.Profile = &Profile{}
	}
	outputs := make([]bundle.File, len(e.mains))
	defer st.stopAhead()
	pending := make([]*pendingFile, len(e.mains))
	defer func() { // (a failed render leaves none running)
		for _, p := range pending {
			if p != nil {
				<-p.done
			}
		}
	}()
	// Each file is written apart while the next ones render, and taken in order: the
	// first file that fails is the render's error, as if they were written one by one.
	finish := func(upTo int) error {
		for i, p := range pending[:upTo] {
			if p == nil {
				continue
			}
			var err error
			outputs[i], err = e.finish(p)
			pending[i] = nil
			if err != nil {
				return e.diagnose(ctx, e.mains[i], in, err)
			}
		}
		return nil
	}
	for i := range e.mains {
		var err error
		outputs[i], res.Timings[i], pending[i], err = e.renderStart(ctx, e.mains[i], res.Profile)
		if err != nil {
			st.rec = nil
			if err := finish(i); err != nil {
				return nil, err
			}
			return nil, e.diagnose(ctx, e.mains[i], in, err)
		}
	}
	if err := finish(len(pending)); err != nil {
		return nil, err
	}
	files := append(outputs, e.g.registry.list()...)
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f.Target()] {
			return nil, fmt.Errorf("%s is both declared in the config and registered by a template", f.Target())
		}
		seen[f.Target()] = true
	}
	for i := range files {
		if files[i].Hash == "" { // registered files; rendered ones carry theirs
			files[i].Hash = bundle.HashText(files[i].Content)
		}
	}
	res.Bundle = bundle.Assemble(files)
	res.Shared = e.g.shared.timings
	res.Notes = e.st.notes.sorted()
	res.Reuse = st.reuse
	if st.next != nil {
		res.StoresRead = st.next.storesRead()
		e.keepMemo(st.next)
		e.indexing.Go(func() { indexMemo(st.madeDeps, in.Snapshot) })
	}
	return res, nil
}

// begin fills the globals for a render of in; the caller holds e.mu.
func (e *Engine) begin(in Input) {
	extra := make(map[string]any, len(e.baseExtra)+len(in.ExtraContext))
	for k, v := range e.baseExtra {
		extra[k] = v
	}
	for k, v := range in.ExtraContext {
		extra[k] = v
	}
	e.st = &renderState{snapshot: in.Snapshot, seen: map[string]bool{}, extra: extra, gen: renderGen.Add(1),
		kept: &libraryCaches{}} // a Fresh render keeps nothing from earlier renders
	e.g.extraContext = extra
	for k, p := range e.g.extras {
		*p = extra[k]
	}
	e.g.shared = newShared(e.st)
	e.g.registry = newFileRegistry(e.resolver, e.st)
	e.st.files = e.g.registry
	e.g.current = in.CurrentConfig
}

// renderOne renders one top-level template, or reuses its last output when nothing
// it read changed. Without st.next (diagnosis, profiling) nothing is recorded.
func (e *Engine) renderOne(ctx context.Context, m mainTemplate, profile *Profile) (bundle.File, Timing, error) {
	f, timing, p, err := e.renderStart(ctx, m, profile)
	if err == nil && p != nil {
		f, err = e.finish(p)
	}
	return f, timing, err
}

// pendingFile is a rendered file whose normal form is written, checked and hashed
// apart (haproxy.cfg's at 5,000 routes: 2–3 ms; a map's: 1–2 ms), while the next
// files render; the render takes it after them (finish).
type pendingFile struct {
	done   chan struct{}
	target string
	file   bundle.File
	memo   *fileMemo // nil when the render is not recording
	err    error
}

// writeApart runs write on a goroutine of its own, a panic made an error.
func writeApart(target string, write func(p *pendingFile)) *pendingFile {
	p := &pendingFile{done: make(chan struct{}), target: target}
	go func() {
		defer close(p.done)
		defer func() {
			if r := recover(); r != nil {
				p.err = fmt.Errorf("normalizing %s: %v", target, r)
			}
		}()
		write(p)
	}()
	return p
}

// finishApart writes the normal form of haproxy.cfg rendered again (buf) after last
// apart (normalizeConfigEdited copies the last one's, 7 MB at 50,000 routes), and
// checks and hashes it (deps and shared: the file's memo's, nil when the render is
// not recording).
func finishApart(m mainTemplate, buf *output, last *fileMemo, deps *deps, shared []string) *pendingFile {
	return writeApart(m.file.Target(), func(p *pendingFile) {
		out, marks, same := normalizeConfigEdited(buf, last.out, last.file.Content, last.marks)
		if same {
			p.file = last.file // (the last file stands)
			if deps != nil {
				p.memo = &fileMemo{file: last.file, raw: last.raw, out: buf, deps: deps, marks: last.marks, shared: shared}
			}
			return
		}
		p.file, p.err = checked(m, out, last)
		if deps != nil && p.err == nil {
			p.memo = &fileMemo{file: p.file, out: buf, deps: deps, marks: marks, shared: shared}
		}
	})
}

// writeFile writes the normal form of a file rendered (buf), or of a map or file
// rendered again, apart, and checks and hashes it; last is its last memo, if any.
func writeFile(m mainTemplate, buf *output, last *fileMemo, deps *deps, shared []string) *pendingFile {
	return writeApart(m.file.Target(), func(p *pendingFile) {
		raw := buf.take(m.file.Kind)
		if last != nil && raw.Equal(last.raw) {
			p.file = last.file
			if deps != nil {
				p.memo = &fileMemo{file: last.file, raw: last.raw, out: buf, deps: deps, marks: last.marks, shared: shared}
			}
			return
		}
		var out bundle.Text
		var marks []configMark
		switch {
		case m.file.Kind == bundle.KindConfig && len(m.post) == 0:
			var normal string
			if normal, marks = normalizeConfig(raw.String()); marks != nil {
				raw = bundle.Text{} // (its output is kept: configEdit)
			}
			out = bundle.TextOf(normal)
		case last != nil && len(m.post) == 0 && last.raw.Same(last.file.Content):
			out = normalizeEdited(m.file.Kind, raw, last.raw)
		default:
			out = bundle.TextOf(normalize(m.file.Kind, raw.String()))
		}
		for _, pp := range m.post {
			out = bundle.TextOf(pp.apply(out.String()))
		}
		p.file, p.err = checked(m, out, last)
		if deps != nil && p.err == nil {
			p.memo = &fileMemo{file: p.file, raw: raw, out: buf, deps: deps, marks: marks, shared: shared}
		}
	})
}

// checked is the file of m with content out, checked against the last one's and
// hashed from where it stops beginning like it (a memoized file is not hashed again).
func checked(m mainTemplate, out bundle.Text, last *fileMemo) (bundle.File, error) {
	var prev bundle.Text
	if last != nil {
		prev = last.file.Content
	}
	if err := checkChanged(m.file.Kind, out, prev, last != nil); err != nil {
		target := m.file.Target()
		return bundle.File{}, &TemplateError{Target: target, Template: target, Message: err.Error()}
	}
	f := m.file
	f.Content, f.Hash = out, bundle.HashEdited(prev, out)
	return f, nil
}

// finish waits for a file written apart and memoizes it.
func (e *Engine) finish(p *pendingFile) (bundle.File, error) {
	<-p.done
	if p.err != nil {
		return bundle.File{}, p.err
	}
	if p.memo != nil {
		e.st.next.putFile(p.target, p.memo)
		e.st.reuse.FilesRendered++
	}
	return p.file, nil
}

// renderStart renders one top-level template: the file, or a haproxy.cfg rendered
// again whose normal form is being written apart (pendingFile).
func (e *Engine) renderStart(ctx context.Context, m mainTemplate, profile *Profile) (bundle.File, Timing, *pendingFile, error) {
	st := e.st
	target := m.file.Target()
	start, shared := time.Now(), e.g.shared.spent()
	if fm := st.prev.file(target); fm != nil && fm.deps.current(st) && st.replay(fm.deps, st.files) {
		st.next.putFile(target, fm)
		st.next.carry(st.prev, target)
		st.next.keepShared(st.prev, fm.shared)
		st.reuse.Files++
		return fm.file, Timing{Target: target, Duration: time.Since(start)}, nil, nil
	}
	var tracer *Tracer
	if profile != nil {
		tracer = newTracer(target)
		ctx = context.WithValue(ctx, tracerKey{}, tracer)
	}
	last := st.prev.file(target)
	lastLen := 0
	switch {
	case last != nil:
		lastLen = last.out.litLen() // (what it wrote besides reused units)
	case st.next != nil: // a render from nothing: the size of an earlier one, if any
		lastLen = st.next.sizes[target].output
	}
	buf := newOutput(lastLen)
	st.out = buf
	defer func() { st.out = nil }()
	if st.next != nil {
		st.rec = newRecorder(target, buf)
		defer func() { st.rec = nil }()
	}
	var err error
	// (labelled: a CPU profile can focus on one file's own work, docs/rendering.md)
	pprof.Do(ctx, pprof.Labels("file", target), func(ctx context.Context) { err = runTemplate(ctx, m.tmpl, buf) })
	took := time.Since(start)
	timing := Timing{Target: target, Duration: took, Shared: e.g.shared.spent() - shared}
	if err != nil {
		return bundle.File{}, timing, nil, e.describe(target, err)
	}
	if tracer != nil {
		tracer.root.Duration = took
		profile.add(&tracer.root)
	}
	// Written as last time (a change it read did not change what it writes, as
	// haproxy.cfg after most route changes): the last file, normalized, checked and
	// hashed, stands. The same reused units in the same places say so without
	// copying them into one string.
	if last != nil && buf.sameAs(last.out) {
		if st.rec != nil {
			st.next.putFile(target, &fileMemo{file: last.file, raw: last.raw, out: buf, deps: st.made(st.rec.root()), marks: last.marks,
				shared: st.rec.shared})
			st.reuse.FilesRendered++
		}
		return last.file, timing, nil, nil
	}
	var d *deps
	var sharedRead []string
	if st.rec != nil {
		d, sharedRead = st.made(st.rec.root()), st.rec.shared
	}
	// haproxy.cfg rendered again: normalized from the last one's normal form, its
	// raw text never copied into one string (nor kept: its output is).
	if m.file.Kind == bundle.KindConfig && len(m.post) == 0 && last != nil && last.marks != nil {
		return bundle.File{}, timing, finishApart(m, buf, last, d, sharedRead), nil
	}
	return bundle.File{}, timing, writeFile(m, buf, last, d, sharedRead), nil
}

// Targets lists the top-level templates in render order (haproxy.cfg, maps, ...).
func (e *Engine) Targets() []string {
	out := make([]string, len(e.mains))
	for i, m := range e.mains {
		out[i] = m.file.Target()
	}
	return out
}

// runTemplate runs a template, turning the panic Scriggo's VM raises for some
// internal errors (a context cancelled inside a nested call surfaces as a "fatal
// error" panic) into an error: a render must never take the controller down.
func runTemplate(ctx context.Context, tmpl *scriggo.Template, buf io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
				return
			}
			err = fmt.Errorf("template engine: %v", r)
		}
	}()
	return tmpl.Run(buf, nil, &scriggo.RunOptions{Context: ctx})
}

// buildMu serializes template builds: Scriggo's type checker shares state between
// builds (the race detector sees two concurrent compiles write the same type
// information), and a controller compiles from more than one goroutine (a config's
// iteration, the admission standby, error diagnosis).
var buildMu sync.Mutex

func buildTemplate(fsys scriggo.Files, path string, decls native.Declarations) (*scriggo.Template, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	return scriggo.BuildTemplate(fsys, path, &scriggo.BuildOptions{Globals: decls})
}
