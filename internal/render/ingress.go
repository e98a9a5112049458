package render

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/open2b/scriggo/native"
)

// ingress_annotations and ingress_routes are the per-Ingress work of the ingress
// library in Go: validating an Ingress and writing its routes, backends and map lines
// into the library's fragment (a map[string][]any of key, value pairs per list, see
// merge.go). In the template it cost tens of reflect calls per Ingress, most of a
// full render; the library keeps the layout, the annotation settings (its
// IngressSettings) and the TLS bundles:
//
//	{% var st = c.Defaults %}
//	{% if vals := ingress_annotations(f, "ingresses", ns, name, prefix); vals != nil %}...settings...{% end %}
//	{% for _, t := range ingress_routes(f, "ingresses", ns, name, takeDefault, st, c.DefaultSig, c.HeaderMap, prefix) %}...{% end %}
//
// Both read the Ingress by key from the named store (recorded like GetSingle). A
// problem is an "error" pair in the fragment, after which nothing more is added.
// Object strings reach the lines through the same writers and checks the templates
// use.

// ingressAnnotations is ingress_annotations(f, store, ns, name, prefix): the
// Ingress's annotations whose name starts with prefix (annotation_values), nil when
// it has none; an invalid namespace is the fragment's error.
func (rd reader) ingressAnnotations(f map[string][]any, store, ns, name, prefix string) map[string]string {
	var ing *ingressForm
	if isDNSLabel(ns) { // (else the error, without a read)
		objs := rd.getSingle(store, []string{ns, name})
		if len(objs) == 0 {
			return nil
		}
		ing = formOf(objs[0], formIngress, ingressFormOf)
	}
	return ingressAnnotationsOf(f, ns, name, ing, prefix)
}

// ingressAnnotationsOf is ingress_annotations of Ingress ns/name read as ing.
func ingressAnnotationsOf(f map[string][]any, ns, name string, ing *ingressForm, prefix string) map[string]string {
	if !isDNSLabel(ns) {
		f["error"] = append(f["error"], "", "Ingress "+ns+"/"+name+": metadata.namespace: "+toJSON(ns)+" is not a DNS label")
		return nil
	}
	var out map[string]string
	for k, v := range ing.annotations {
		if strings.HasPrefix(k, prefix) {
			if out == nil {
				out = map[string]string{}
			}
			out[k[len(prefix):]] = strings.TrimSpace(rawString(v))
		}
	}
	return out
}

// ingressRoute is a path of an Ingress: exact, prefix or the default backend.
// ruleIdx and pathIdx place it in spec.rules (-1: spec.defaultBackend), for messages.
type ingressRoute struct {
	kind, hostKey, path, svc, port string
	ruleIdx, pathIdx               int
}

// ingressRoutes is ingress_routes(f, store, ns, name, takeDefault, settings,
// defaultSig, headerMap, prefix): with settings (what the library's IngressSettings
// made of the annotations) it adds the settings' notes and config-global lines, then
// the Ingress's routes, backends and map lines to f. takeDefault: no Ingress before
// it took spec.defaultBackend. It returns the Ingress's TLS entries with a Secret
// name, as {secretName, host...} with the hosts lowercased and checked; nil when f
// holds an error. (Every Ingress of a full render passes here: the messages naming
// an object's field are built only when they are needed.)
func (rd reader) ingressRoutes(env native.Env, f map[string][]any, store, ns, name string, takeDefault bool,
	settings map[string]any, defaultSig, headerMap, annPrefix string) [][]string {
	if routesBlocked(f, settings) {
		return nil
	}
	objs := rd.getSingle(store, []string{ns, name})
	if len(objs) == 0 {
		return nil
	}
	return ingressRoutesOf(env, f, formOf(objs[0], formIngress, ingressFormOf), ns, name, takeDefault, settings,
		defaultSig, headerMap, annPrefix)
}

// routesBlocked reports whether an Ingress adds no routes to f: f holds an error
// already, or its settings have a problem, which f then holds.
func routesBlocked(f map[string][]any, settings map[string]any) bool {
	if len(f["error"]) > 0 {
		return true
	}
	if msg, _ := settings["problem"].(string); msg != "" {
		f["error"] = append(f["error"], "", msg)
		return true
	}
	return false
}

// ingressRoutesOf is ingressRoutes of Ingress ns/name read as ing, when its routes
// are not blocked.
func ingressRoutesOf(env native.Env, f map[string][]any, ing *ingressForm, ns, name string, takeDefault bool,
	settings map[string]any, defaultSig, headerMap, annPrefix string) [][]string {
	kid := func() string { return "Ingress " + ns + "/" + name }
	fail := func(msg string) [][]string {
		f["error"] = append(f["error"], "", msg)
		return nil
	}
	notes, _ := settings["notes"].([]string)
	for _, n := range notes {
		f["notes"] = append(f["notes"], "", n)
	}
	globals, _ := settings["globals"].([]string)
	for _, g := range globals {
		f["globals"] = append(f["globals"], "", g)
	}
	routes := make([]ingressRoute, 0, 4)
	if d := ing.defaultBackend; d != nil && takeDefault {
		if msg := serviceProblem(kid, func() string { return "spec.defaultBackend" }, d.svc, d.port); msg != "" {
			return fail(msg)
		}
		routes = append(routes, ingressRoute{"default", "*", "/", d.svc, d.port, -1, -1})
	}
	for _, rule := range ing.rules {
		ri, host := rule.index, rule.host
		hostKey := "*"
		if host != "" {
			if !isDNSHost(host) {
				return fail(kid() + ": " + ruleField(ri) + ".host: " + toJSON(host) + " is not a DNS name")
			}
			hostKey = host
			if err := config.CheckMapKey(host); err != nil {
				hostKey = refuse(env, kid()+": "+ruleField(ri)+".host", err)
			}
		}
		hostLine := false
		for _, p := range rule.paths {
			pi, path := p.index, p.path
			if !strings.HasPrefix(path, "/") || !plainPath(path) {
				return fail(kid() + ": " + pathField(ri, pi) + ".path: " + toJSON(path) + " must start with / and hold no whitespace or '#'")
			}
			if msg := serviceProblem(kid, func() string { return pathField(ri, pi) + ".backend" }, p.svc, p.port); msg != "" {
				return fail(msg)
			}
			if host != "" && !hostLine {
				// host.map line "<host> <host>" (sorted like the hosts: they hold no space)
				f["hosts"] = append(f["hosts"], host, host+" "+host)
				hostLine = true
			}
			kind := "prefix"
			if p.exact {
				kind = "exact"
			}
			routes = append(routes, ingressRoute{kind, hostKey, path, p.svc, p.port, ri, pi})
		}
	}

	// The routes' map lines, and a backend per service port the first time.
	b := ingressBackends{env: env, f: f, settings: settings, ns: ns, kid: kid,
		defaultSig: defaultSig, headerMap: headerMap, annPrefix: annPrefix}
	for _, r := range routes {
		be := b.nameFor(routes, r.svc, r.port)
		if r.kind == "default" {
			f["default"] = append(f["default"], "", be)
			continue
		}
		be = mapValue(env, be, "backend name")
		if r.kind == "exact" {
			k := r.hostKey + r.path
			f["exact"] = append(f["exact"], k, routeMapKey(env, k, kid, r)+" "+be)
			continue
		}
		// Prefix and ImplementationSpecific: element-wise. /foo matches /foo
		// (prefix-exact) and /foo/... (prefix "/foo/"), never /foobar.
		base := strings.TrimRight(r.path, "/")
		if base != "" {
			k := r.hostKey + base
			f["prefixExact"] = append(f["prefixExact"], k, routeMapKey(env, k, kid, r)+" "+be)
		}
		key := r.hostKey + base + "/"
		// sort key: longest prefix first (map_beg takes the first match)
		f["prefix"] = append(f["prefix"], key, strconv.Itoa(199999-len(key))+" "+routeMapKey(env, key, kid, r)+" "+be)
	}

	// TLS entries: the library makes the PEM bundles and crt-list lines.
	var tls [][]string
	for _, t := range ing.tls {
		for hi, h := range t.hosts {
			if !isDNSHost(h) {
				return fail(kid() + ": spec.tls[" + strconv.Itoa(t.index) + "].hosts[" + strconv.Itoa(hi) + "]: " + toJSON(h) + " is not a DNS name")
			}
		}
		tls = append(tls, append([]string{t.secret}, t.hosts...))
	}
	return tls
}

func ruleField(ri int) string { return "spec.rules[" + strconv.Itoa(ri) + "]" }

func pathField(ri, pi int) string {
	return ruleField(ri) + ".http.paths[" + strconv.Itoa(pi) + "]"
}

// routeMapKey is k when it is a map key (mapKey), the route's path named otherwise.
func routeMapKey(env native.Env, k string, kid func() string, r ingressRoute) string {
	if err := config.CheckMapKey(k); err != nil {
		return refuse(env, kid()+": "+pathField(r.ruleIdx, r.pathIdx)+".path", err)
	}
	return k
}

// plainPath reports whether a path holds no white space, '#', control character
// or DEL (which would end or break a map key).
func plainPath(path string) bool {
	for i := 0; i < len(path); i++ {
		if c := path[i]; c <= ' ' || c == '#' || c == 0x7f {
			return false
		}
	}
	return true
}

// IngressBackend is a backend entry of an ingress fragment ("backends"): what the
// library's backend section writes. A typed record, not a map: the section reads
// its fields for every backend, and a map index in a template costs a reflect call
// and two allocations.
type IngressBackend struct {
	Name       string // a config word (cfg_word)
	Namespace  string
	Service    string
	Port       string   // the Service port's name, or its number as text
	Directives []string // the backend lines its Ingress's annotations ask for
	ServerOpts string   // server options after " check"
	// ikey is the index key of keyOf (its namespace and Service), which both its
	// server reads use (snapshot.IndexKey): made with the backend, not for every
	// render.
	ikey  string
	keyOf [2]string
}

// indexKey is b's ikey while its namespace and Service are the ones it was made of
// (a template may change them); "" otherwise.
func (b *IngressBackend) indexKey() string {
	if b.keyOf != [2]string{b.Namespace, b.Service} {
		return ""
	}
	return b.ikey
}

// ingressBackendsOf is ingress_backends(list): the backend entries of a fragment's
// list of key, value pairs (other values are skipped).
func ingressBackendsOf(pairs []any) []*IngressBackend {
	out := make([]*IngressBackend, 0, len(pairs)/2)
	for i := 1; i < len(pairs); i += 2 {
		if b, ok := pairs[i].(*IngressBackend); ok {
			out = append(out, b)
		}
	}
	return out
}

// ingressBackendRuns is ingress_backend_runs(backends, n): key_runs of the backends'
// names, the runs of about n backends the section renders as one unit.
func (e *Engine) ingressBackendRuns(bs []*IngressBackend, n int) []int {
	return namedRuns(e, bs, func(b *IngressBackend) string { return b.Name }, n)
}

// ingressBackends names the backends of one Ingress, one per service port, and adds
// each with its map lines to the fragment the first time.
type ingressBackends struct {
	env                   native.Env
	f                     map[string][]any
	settings              map[string]any
	ns                    string
	kid                   func() string
	named                 [][3]string // service, port, backend name: most Ingresses have one or two
	defaultSig, headerMap string
	annPrefix             string
}

// annField is "Ingress <ns>/<name>: annotation <prefix>", the start of a message about
// one of its annotations.
func (b *ingressBackends) annField() string { return b.kid() + ": annotation " + b.annPrefix }

// pathsTo are the paths of the routes to service port svc/port: "=<path>" for an
// exact path, the path without trailing "/" for a prefix.
func pathsTo(routes []ingressRoute, svc, port string) []string {
	var out []string
	for _, r := range routes {
		switch {
		case r.kind == "default" || r.svc != svc || r.port != port:
		case r.kind == "exact":
			out = append(out, "="+r.path)
		default:
			out = append(out, strings.TrimRight(r.path, "/"))
		}
	}
	return out
}

// nameFor is the backend of service port svc/port, added to the fragment the first
// time (routes are the Ingress's, apart from b: what b holds escapes to the heap).
func (b *ingressBackends) nameFor(routes []ingressRoute, svc, port string) string {
	for _, n := range b.named {
		if n[0] == svc && n[1] == port {
			return n[2]
		}
	}
	st := b.settings
	dirs, _ := st["directives"].([]string)
	sig, _ := st["signature"].(string)
	if t, _ := st["rewriteTarget"].(string); t != "" {
		if paths := pathsTo(routes, svc, port); len(paths) > 0 {
			rw := rewriteRules(b.env, t, paths, b.annField()+"rewrite-target")
			dirs = append(append([]string{}, dirs...), rw...)
			sig += "\x00" + strings.Join(rw, "\n")
		}
	}
	name := "ing_" + b.ns + "_" + svc + "_" + port
	if sig != b.defaultSig {
		name += "_" + sha256Hex(sig)[:8]
	}
	name = cfgWord(b.env, name, "backend name") // (the library writes it as it is)
	b.named = append(b.named, [3]string{svc, port, name})
	serverOpts, _ := st["serverOpts"].(string)
	f := b.f
	f["backends"] = append(f["backends"], name, &IngressBackend{Name: name, Namespace: b.ns, Service: svc,
		Port: port, Directives: dirs, ServerOpts: serverOpts, ikey: snapshot.IndexKey([]string{b.ns, svc}), keyOf: [2]string{b.ns, svc}})
	// map keys and values: the writers refuse what a map line cannot hold
	env := b.env
	if fl, _ := st["flags"].(string); fl != "" {
		f["flags"] = append(f["flags"], name, mapKey(env, name, "backend name")+" "+fl)
	}
	if r, _ := st["rateLimit"].(string); r != "" {
		f["rates"] = append(f["rates"], name, mapKey(env, name, "backend name")+" "+mapValue(env, r, b.annField()+"rate-limit-rps"))
	}
	if co, _ := st["cors"].(string); co != "" {
		ann := b.annField()
		f["cors"] = append(f["cors"], name, mapKey(env, name, "backend name")+" "+mapValue(env, co, ann+"cors-enable"))
		origins, _ := st["corsOrigins"].([]string)
		for _, o := range origins {
			k := name + "/" + o
			f["cors"] = append(f["cors"], k, mapKey(env, k, ann+"cors-allow-origin")+" "+mapValue(env, o, ann+"cors-allow-origin"))
		}
	}
	headers, _ := st["headers"].([][]string)
	for _, hs := range headers {
		hid := hs[0] + "/" + sha256Hex(strings.ToLower(hs[1]))[:12]
		hann, rule := b.annField()+"request-set-header", "http-request"
		if hs[0] == "s" {
			hann, rule = b.annField()+"response-set-header", "http-response"
		}
		k := name + "/" + hid
		f["headers"] = append(f["headers"], k, mapKey(env, k, hann)+" "+mapValue(env, hs[2], hann))
		lookup := "var(txn.route),concat(/" + hid + "),map(" + b.headerMap + ")"
		rk := hs[0] + " " + strings.ToLower(hs[1])
		f["rules"] = append(f["rules"], rk, rk+"\x00"+rule+" set-header "+cfgWord(env, hs[1], hann)+" %["+lookup+"] if { "+lookup+" -m found }")
	}
	if ul, _ := st["userlist"].(string); ul != "" {
		users, _ := st["users"].([]string)
		f["userlists"] = append(f["userlists"], ul, map[string]any{"name": ul, "users": users})
	}
	return name
}

// rewriteRules are the rewrite-target lines of a backend: one replace-path per path
// of the Ingress that leads to it, longest first; the first that matches the
// request's original path (txn.path) wins. A Prefix path /foo maps /foo and /foo/x to
// <target>/ and <target>/x; an exact path ("=/foo") maps itself to target.
func rewriteRules(env native.Env, target string, paths []string, field string) []string {
	t := strings.TrimSuffix(target, "/")
	sorted := make([]string, 0, len(paths))
	for _, p := range paths {
		sorted = append(sorted, strconv.Itoa(199999-len(p))+" "+p)
	}
	sorted = unique(sorted)
	sort.Strings(sorted)
	var out []string
	for _, sp := range sorted {
		p := sp[7:]
		var re, repl string
		if strings.HasPrefix(p, "=") {
			re = "^" + regexp.QuoteMeta(p[1:]) + "$"
			repl = target
		} else {
			re = "^" + regexp.QuoteMeta(p) + "(/(.*))?$"
			repl = t + `/\2`
		}
		w := cfgWord(env, re, field)
		out = append(out, "http-request replace-path "+w+" "+lfWord(env, repl, field)+" if !{ var(txn.rewritten) -m found } { var(txn.path) -m reg "+w+" }",
			"http-request set-var(txn.rewritten) bool(true) if { var(txn.path) -m reg "+w+" }")
	}
	return out
}

// serviceBackend reads an IngressBackend's service name and port (its name, or its
// number as text, "0" when it has neither); ok is false without a service port.
func serviceBackend(b map[string]any) (svc, port string, ok bool) {
	s, _ := b["service"].(map[string]any)
	p, isMap := s["port"].(map[string]any)
	if !isMap {
		return "", "", false
	}
	port = rawString(p["name"])
	if port == "" {
		port = strconv.Itoa(toInt(p["number"]))
	}
	return rawString(s["name"]), port, true
}

// serviceProblem says why a Service name and port (name or number) cannot be part of
// a backend name, or "".
func serviceProblem(kid, field func() string, svc, port string) string {
	if !isDNSLabel(svc) {
		return kid() + ": " + field() + ".service.name: " + toJSON(svc) + " is not a DNS label"
	}
	if !isDNSLabel(port) || len(port) > 15 {
		return kid() + ": " + field() + ".service.port.name: " + toJSON(port) + " is not a port name"
	}
	return ""
}

func rawString(v any) string {
	s, _ := v.(string)
	return s
}

// ingressesOfClass is ingresses_of_class(store, keys, class, orUnset): the Ingresses
// among keys ("namespace/name", in order) whose spec.ingressClassName is class, or
// unset when orUnset (our IngressClass is the default one), as {namespace, name}
// pairs. Each is read by key (recorded like GetSingle); a key without an object, a
// spec or metadata is left out.
func (rd reader) ingressesOfClass(store string, keys []string, class string, orUnset bool) [][]string {
	out := make([][]string, 0, len(keys))
	for _, k := range keys {
		ns, name, ok := strings.Cut(k, "/")
		if !ok {
			continue
		}
		if _, ok := ingressOfClass(rd.getSingle(store, []string{ns, name}), class, orUnset); ok {
			out = append(out, []string{ns, name})
		}
	}
	return out
}

// ingressOfClass is the form of the Ingress objs holds when it has metadata and a
// spec and its class is class (or unset, when orUnset).
func ingressOfClass(objs []snapshot.Object, class string, orUnset bool) (*ingressForm, bool) {
	if len(objs) == 0 {
		return nil, false
	}
	ing := formOf(objs[0], formIngress, ingressFormOf)
	return ing, ing.usable && (ing.class == class || ing.class == "" && orUnset)
}
