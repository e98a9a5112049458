package render

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

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
func (e *Engine) ingressAnnotations(f map[string][]any, store, ns, name, prefix string) map[string]string {
	if !isDNSLabel(ns) {
		f["error"] = append(f["error"], "", "Ingress "+ns+"/"+name+": metadata.namespace: "+toJSON(ns)+" is not a DNS label")
		return nil
	}
	objs := e.st.getSingle(store, []string{ns, name})
	if len(objs) == 0 {
		return nil
	}
	meta, _ := objs[0].Raw["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	var out map[string]string
	for k, v := range ann {
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
type ingressRoute struct {
	kind, hostKey, path, svc, port, field string
}

// ingressRoutes is ingress_routes(f, store, ns, name, takeDefault, settings,
// defaultSig, headerMap, prefix): with settings (what the library's IngressSettings
// made of the annotations) it adds the settings' notes and config-global lines, then
// the Ingress's routes, backends and map lines to f. takeDefault: no Ingress before
// it took spec.defaultBackend. It returns the Ingress's TLS entries with a Secret
// name, as {secretName, host...} with the hosts lowercased and checked; nil when f
// holds an error.
func (e *Engine) ingressRoutes(env native.Env, f map[string][]any, store, ns, name string, takeDefault bool,
	settings map[string]any, defaultSig, headerMap, annPrefix string) [][]string {
	kid := "Ingress " + ns + "/" + name
	fail := func(msg string) [][]string {
		f["error"] = append(f["error"], "", msg)
		return nil
	}
	if len(f["error"]) > 0 {
		return nil
	}
	if msg, _ := settings["problem"].(string); msg != "" {
		return fail(msg)
	}
	objs := e.st.getSingle(store, []string{ns, name})
	if len(objs) == 0 {
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
	spec, _ := objs[0].Raw["spec"].(map[string]any)

	var routes []ingressRoute
	pathsOf := map[string][]string{}
	if b, ok := spec["defaultBackend"].(map[string]any); ok && takeDefault {
		if svc, port, ok := serviceBackend(b); ok {
			if msg := serviceProblem(kid, "spec.defaultBackend", svc, port); msg != "" {
				return fail(msg)
			}
			routes = append(routes, ingressRoute{"default", "*", "/", svc, port, "spec.defaultBackend"})
		}
	}
	rules, _ := spec["rules"].([]any)
	for ri, r := range rules {
		rule, _ := r.(map[string]any)
		http, ok := rule["http"].(map[string]any)
		if !ok {
			continue
		}
		rfield := "spec.rules[" + strconv.Itoa(ri) + "]"
		host := strings.ToLower(rawString(rule["host"]))
		hostKey := "*"
		if host != "" {
			if !isDNSHost(host) {
				return fail(kid + ": " + rfield + ".host: " + toJSON(host) + " is not a DNS name")
			}
			hostKey = mapKey(env, host, kid+": "+rfield+".host")
		}
		paths, _ := http["paths"].([]any)
		for pi, pv := range paths {
			p, _ := pv.(map[string]any)
			b, _ := p["backend"].(map[string]any)
			svc, port, ok := serviceBackend(b)
			if !ok {
				continue
			}
			pfield := rfield + ".http.paths[" + strconv.Itoa(pi) + "]"
			path := rawString(p["path"])
			if path == "" {
				path = "/"
			}
			if !strings.HasPrefix(path, "/") || regexMatch(`[\s#\x00-\x1f\x7f]`, path) {
				return fail(kid + ": " + pfield + ".path: " + toJSON(path) + " must start with / and hold no whitespace or '#'")
			}
			if msg := serviceProblem(kid, pfield+".backend", svc, port); msg != "" {
				return fail(msg)
			}
			if host != "" {
				// host.map line "<host> <host>" (sorted like the hosts: they hold no space)
				f["hosts"] = append(f["hosts"], host, host+" "+host)
			}
			kind := "prefix"
			if rawString(p["pathType"]) == "Exact" {
				kind = "exact"
			}
			routes = append(routes, ingressRoute{kind, hostKey, path, svc, port, kid + ": " + pfield + ".path"})
			sp := svc + "/" + port
			if kind == "exact" {
				pathsOf[sp] = append(pathsOf[sp], "="+path)
			} else {
				pathsOf[sp] = append(pathsOf[sp], strings.TrimRight(path, "/"))
			}
		}
	}

	// The routes' map lines, and a backend per service port the first time.
	b := ingressBackends{env: env, f: f, settings: settings, ns: ns, kid: kid, pathsOf: pathsOf,
		nameOf: map[string]string{}, defaultSig: defaultSig, headerMap: headerMap, annField: kid + ": annotation " + annPrefix}
	for _, r := range routes {
		be := b.nameFor(r.svc, r.port)
		if r.kind == "default" {
			f["default"] = append(f["default"], "", be)
			continue
		}
		be = mapValue(env, be, "backend name")
		if r.kind == "exact" {
			k := r.hostKey + r.path
			f["exact"] = append(f["exact"], k, mapKey(env, k, r.field)+" "+be)
			continue
		}
		// Prefix and ImplementationSpecific: element-wise. /foo matches /foo
		// (prefix-exact) and /foo/... (prefix "/foo/"), never /foobar.
		base := strings.TrimRight(r.path, "/")
		if base != "" {
			k := r.hostKey + base
			f["prefixExact"] = append(f["prefixExact"], k, mapKey(env, k, r.field)+" "+be)
		}
		key := r.hostKey + base + "/"
		// sort key: longest prefix first (map_beg takes the first match)
		f["prefix"] = append(f["prefix"], key, strconv.Itoa(199999-len(key))+" "+mapKey(env, key, r.field)+" "+be)
	}

	// TLS entries: the library makes the PEM bundles and crt-list lines.
	var tls [][]string
	entries, _ := spec["tls"].([]any)
	for ti, tv := range entries {
		t, _ := tv.(map[string]any)
		secret := rawString(t["secretName"])
		if secret == "" {
			continue
		}
		entry := []string{secret}
		hosts, _ := t["hosts"].([]any)
		for hi, hv := range hosts {
			h := strings.ToLower(rawString(hv))
			if !isDNSHost(h) {
				return fail(kid + ": spec.tls[" + strconv.Itoa(ti) + "].hosts[" + strconv.Itoa(hi) + "]: " + toJSON(h) + " is not a DNS name")
			}
			entry = append(entry, h)
		}
		tls = append(tls, entry)
	}
	return tls
}

// ingressBackends names the backends of one Ingress, one per service port, and adds
// each with its map lines to the fragment the first time.
type ingressBackends struct {
	env                   native.Env
	f                     map[string][]any
	settings              map[string]any
	ns, kid               string
	pathsOf               map[string][]string
	nameOf                map[string]string
	defaultSig, headerMap string
	annField              string // "Ingress <ns>/<name>: annotation <prefix>"
}

func (b *ingressBackends) nameFor(svc, port string) string {
	sp := svc + "/" + port
	if n, ok := b.nameOf[sp]; ok {
		return n
	}
	st := b.settings
	dirs, _ := st["directives"].([]string)
	sig, _ := st["signature"].(string)
	if t, _ := st["rewriteTarget"].(string); t != "" && len(b.pathsOf[sp]) > 0 {
		rw := rewriteRules(b.env, t, b.pathsOf[sp], b.annField+"rewrite-target")
		dirs = append(append([]string{}, dirs...), rw...)
		sig += "\x00" + strings.Join(rw, "\n")
	}
	name := "ing_" + b.ns + "_" + svc + "_" + port
	if sig != b.defaultSig {
		name += "_" + sha256Hex(sig)[:8]
	}
	b.nameOf[sp] = name
	serverOpts, _ := st["serverOpts"].(string)
	f := b.f
	f["backends"] = append(f["backends"], name, map[string]any{"name": name, "namespace": b.ns, "service": svc,
		"port": port, "directives": dirs, "serverOpts": serverOpts})
	// map keys and values: the writers refuse what a map line cannot hold
	env := b.env
	if fl, _ := st["flags"].(string); fl != "" {
		f["flags"] = append(f["flags"], name, mapKey(env, name, "backend name")+" "+fl)
	}
	if r, _ := st["rateLimit"].(string); r != "" {
		f["rates"] = append(f["rates"], name, mapKey(env, name, "backend name")+" "+mapValue(env, r, b.annField+"rate-limit-rps"))
	}
	if co, _ := st["cors"].(string); co != "" {
		f["cors"] = append(f["cors"], name, mapKey(env, name, "backend name")+" "+mapValue(env, co, b.annField+"cors-enable"))
		origins, _ := st["corsOrigins"].([]string)
		for _, o := range origins {
			k := name + "/" + o
			f["cors"] = append(f["cors"], k, mapKey(env, k, b.annField+"cors-allow-origin")+" "+mapValue(env, o, b.annField+"cors-allow-origin"))
		}
	}
	headers, _ := st["headers"].([][]string)
	for _, hs := range headers {
		hid := hs[0] + "/" + sha256Hex(strings.ToLower(hs[1]))[:12]
		hann, rule := b.annField+"request-set-header", "http-request"
		if hs[0] == "s" {
			hann, rule = b.annField+"response-set-header", "http-response"
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
func serviceProblem(kid, field, svc, port string) string {
	if !isDNSLabel(svc) {
		return kid + ": " + field + ".service.name: " + toJSON(svc) + " is not a DNS label"
	}
	if !isDNSLabel(port) || len(port) > 15 {
		return kid + ": " + field + ".service.port.name: " + toJSON(port) + " is not a port name"
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
func (e *Engine) ingressesOfClass(store string, keys []string, class string, orUnset bool) [][]string {
	out := make([][]string, 0, len(keys))
	for _, k := range keys {
		ns, name, ok := strings.Cut(k, "/")
		if !ok {
			continue
		}
		objs := e.st.getSingle(store, []string{ns, name})
		if len(objs) == 0 {
			continue
		}
		spec, hasSpec := objs[0].Raw["spec"].(map[string]any)
		if _, hasMeta := objs[0].Raw["metadata"].(map[string]any); !hasSpec || !hasMeta {
			continue
		}
		cn := rawString(spec["ingressClassName"])
		if cn == class || (cn == "" && orUnset) {
			out = append(out, []string{ns, name})
		}
	}
	return out
}
