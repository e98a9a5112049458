package render

import (
	"reflect"
	"strings"

	"github.com/open2b/scriggo/native"
)

// ingressBuiltins are the ingress library's Go helpers (docs/templates.md).
func (e *Engine) ingressBuiltins() native.Declarations {
	return native.Declarations{
		"IngressBackend":        reflect.TypeOf(IngressBackend{}),
		"ingress_backends":      ingressBackendsOf,
		"ingress_servers_ahead": e.ingressServersAhead,
		"ingress_backend_runs":  e.ingressBackendRuns,
		"ingress_merge_runs":    e.ingressMergeRuns,
		"ingress_fragments":     e.ingressFragments,
		"ingress_annotations": func(f map[string][]any, store, ns, name, prefix string) map[string]string {
			return e.st.here().ingressAnnotations(f, store, ns, name, prefix)
		},
		"ingress_routes": func(env native.Env, f map[string][]any, store, ns, name string, takeDefault bool,
			settings map[string]any, defaultSig, headerMap, annPrefix string) [][]string {
			return e.st.here().ingressRoutes(env, f, store, ns, name, takeDefault, settings, defaultSig, headerMap, annPrefix)
		},
		"ingresses_of_class": func(store string, keys []string, class string, orUnset bool) [][]string {
			return e.st.here().ingressesOfClass(store, keys, class, orUnset)
		},
	}
}

// The library's template functions ingress_fragments calls, at most once per run of
// Ingresses each: the settings of the run's Ingresses with annotations (its
// IngressSettings of each "namespace/name", namespace and annotations), and the TLS
// entries of the run's Ingresses with some, written into their fragments.
type (
	ingressSettingsFunc = func(ids, namespaces []string, annotations []map[string]string) []map[string]any
	ingressTLSFunc      = func(fragments []map[string][]any, namespaces []string, entries [][][]string)
)

// ingressFragments is ingress_fragments(store, class, orUnset, defaults, defaultSig,
// headerMap, prefix, settingsOf, tlsOf): the fragments of the Ingresses of the class
// in store (its Keys() order), merged in runs of about 64 (key_runs), each run
// remembered as cached would while its Ingresses, whether an earlier Ingress took
// spec.defaultBackend, and what the run read stay the same. It returns the runs'
// fragments in order and the default backend (of the first Ingress with a
// spec.defaultBackend), or the render's error: the first failing Ingress's, after
// which nothing counts.
//
// An Ingress's fragment is what ingress_annotations and ingress_routes write, with
// the defaults as settings or, for an Ingress with annotations of prefix, what
// settingsOf makes of them; tlsOf then writes its TLS entries. The runs to make are
// made apart (apart.go): their Ingresses are read and settingsOf called on the
// template's goroutine, run after run; their routes are written on every core; then,
// in order, tlsOf is called and each run merged and memoized. A template step per
// Ingress was a third of a full render at 5,000 Ingresses.
func (e *Engine) ingressFragments(env native.Env, store, class string, orUnset bool, defaults map[string]any,
	defaultSig, headerMap, prefix string, settingsOf ingressSettingsFunc, tlsOf ingressTLSFunc) ([]map[string][]any, string, string) {
	c := &ingressCall{e: e, env: env, store: store, class: class, orUnset: orUnset, defaults: defaults,
		defaultSig: defaultSig, headerMap: headerMap, prefix: prefix, settingsOf: settingsOf, tlsOf: tlsOf}
	keys := e.st.sharedKeys(store) // (read only: runs and their memos hold parts of it)
	bounds := e.keyRunsKept(keys, 64)
	runs := make([]*ingressRun, 0, len(bounds))
	var toMake []*ingressRun
	takeDefault := true
	for r := 0; r+1 < len(bounds); r++ {
		run := &ingressRun{keys: keys[bounds[r]:bounds[r+1]]}
		run.key = "ingresses from " + run.keys[0]
		run.inputs = []any{run.keys, takeDefault, class, orUnset}
		runs = append(runs, run)
		if run.memo = e.standing(run.key, run.inputs); run.memo != nil {
			f := run.memo.value.(map[string][]any)
			if f["error"] != nil {
				break // nothing after the render's error counts
			}
			takeDefault = takeDefault && f["default"] == nil
			continue
		}
		toMake = append(toMake, run)
		takeDefault = c.read(run, takeDefault)
	}
	panics := eachApart(len(toMake), func(i int) { c.writeRoutes(toMake[i]) })
	for i, run := range toMake {
		run.panicked = panics[i]
	}
	var frags []map[string][]any
	defaultBackend := ""
	for _, run := range runs {
		f := c.fragment(run)
		if e := f["error"]; e != nil {
			return nil, "", e[1].(string)
		}
		if d := f["default"]; d != nil {
			defaultBackend = d[1].(string)
		}
		frags = append(frags, f)
	}
	return frags, defaultBackend, ""
}

// ingressCall is one ingress_fragments call: its arguments.
type ingressCall struct {
	e                             *Engine
	env                           native.Env
	store, class                  string
	orUnset                       bool
	defaults                      map[string]any
	defaultSig, headerMap, prefix string
	settingsOf                    ingressSettingsFunc
	tlsOf                         ingressTLSFunc
}

// ingressRun is a run of Ingresses (keys) a render takes as one memo.
type ingressRun struct {
	key    string
	inputs []any // keys, takeDefault, class, orUnset
	keys   []string
	memo   *valueMemo // an earlier render's, standing; nil: made now
	// what making it read (nil when the render is not recording)
	deps   *deps
	recent recentReads
	// the run's Ingresses of the class: namespace and name, fragment, settings,
	// whether it may take spec.defaultBackend, TLS entries
	ings     [][]string
	forms    []*ingressForm
	frags    []map[string][]any
	settings []map[string]any
	take     []bool
	tls      [][][]string
	panicked any // what writing the routes panicked with
}

// reader reads for the run: its reads are recorded in its deps.
func (run *ingressRun) reader(st *renderState) reader {
	return reader{st: st, deps: run.deps, recent: &run.recent}
}

// read reads a run's Ingresses of the class and their annotations, and has the
// library make the settings of those with some. It returns whether the Ingresses
// after the run may take spec.defaultBackend.
func (c *ingressCall) read(run *ingressRun, takeDefault bool) bool {
	st := c.e.st
	if st.rec != nil {
		run.deps = &deps{}
	}
	rd := run.reader(st)
	n := len(run.keys)
	run.ings, run.forms, run.frags = make([][]string, 0, n), make([]*ingressForm, 0, n), make([]map[string][]any, 0, n)
	run.settings, run.take = make([]map[string]any, 0, n), make([]bool, 0, n)
	var annotated []int
	var ids, nss []string
	var vals []map[string]string
	for _, k := range run.keys {
		ns, name, ok := strings.Cut(k, "/")
		if !ok {
			continue
		}
		ing, ok := ingressOfClass(rd.getSingle(c.store, []string{ns, name}), c.class, c.orUnset)
		if !ok {
			continue
		}
		f := map[string][]any{}
		if v := ingressAnnotationsOf(f, ns, name, ing, c.prefix); v != nil {
			annotated = append(annotated, len(run.ings))
			ids, nss, vals = append(ids, ns+"/"+name), append(nss, ns), append(vals, v)
		}
		run.ings, run.forms, run.frags = append(run.ings, []string{ns, name}), append(run.forms, ing), append(run.frags, f)
		run.settings, run.take = append(run.settings, c.defaults), append(run.take, takeDefault)
		if ing.defaultBackend != nil {
			takeDefault = false // (it takes it, or fails the render)
		}
	}
	run.tls = make([][][]string, len(run.ings))
	if len(annotated) > 0 {
		var settings []map[string]any
		c.e.recordInto(run.deps, func() { settings = c.settingsOf(ids, nss, vals) })
		for j, i := range annotated {
			run.settings[i] = settings[j]
		}
	}
	return takeDefault
}

// writeRoutes writes the routes of a run's Ingresses, as read, into their fragments
// (on a worker: it reads nothing).
func (c *ingressCall) writeRoutes(run *ingressRun) {
	for i, nsName := range run.ings {
		if f := run.frags[i]; !routesBlocked(f, run.settings[i]) {
			run.tls[i] = ingressRoutesOf(c.env, f, run.forms[i], nsName[0], nsName[1], run.take[i], run.settings[i],
				c.defaultSig, c.headerMap, c.prefix)
		}
		if len(run.frags[i]["error"]) > 0 {
			return // the run's error: nothing after it counts
		}
	}
}

// fragment is a run's merged fragment: the earlier render's, or the one made now
// (or, when the earlier one could not be reused after all, made here).
func (c *ingressCall) fragment(run *ingressRun) map[string][]any {
	e := c.e
	if run.memo != nil {
		if e.take(run.key, run.inputs, run.memo) {
			return run.memo.value.(map[string][]any)
		}
		c.read(run, run.inputs[1].(bool))
		c.writeRoutes(run)
	}
	if run.panicked != nil {
		panic(run.panicked)
	}
	// Up to the first error, as one by one: the Ingresses before it, then it alone.
	var part []map[string][]any
	var withTLS []int
	for i, f := range run.frags {
		if f["error"] != nil {
			part, withTLS = []map[string][]any{f}, nil
			break
		}
		part = append(part, f)
		if len(run.tls[i]) > 0 {
			withTLS = append(withTLS, i)
		}
	}
	if len(withTLS) > 0 {
		fs, nss, entries := make([]map[string][]any, len(withTLS)), make([]string, len(withTLS)), make([][][]string, len(withTLS))
		for j, i := range withTLS {
			fs[j], nss[j], entries[j] = run.frags[i], run.ings[i][0], run.tls[i]
		}
		e.recordInto(run.deps, func() { c.tlsOf(fs, nss, entries) })
	}
	f := mergeFragments(part)
	if e.st.rec != nil {
		e.memoize(run.key, run.inputs, f, run.deps)
	}
	return f
}
