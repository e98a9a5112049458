package render

import (
	"regexp"
	"strconv"
)

// gatewayGroup is the Gateway API group a parentRef names when it names none.
const gatewayGroup = "gateway.networking.k8s.io"

// gwRoute is a route (an HTTPRoute or a GRPCRoute) in the gateway library's native
// form (docs/templates.md): defaults filled in, every part with its field path for
// error messages. Typed, not maps: every route of a full render is converted and
// then read field by field.
type gwRoute struct {
	kind, id, wkey, namespace, name, created string
	parents                                  []gwParent
	hostnames                                []string
	rules                                    []gwRule
	h2                                       bool   // the servers speak HTTP/2 (a GRPCRoute)
	err                                      string // a GRPCRoute match that is not one: the render's error
	// order is the HTTPRoute's place in gateway_route_order, made once per object
	// (5,000 keys and items a render from nothing made again)
	order routeOrderEntry
}

// gwParent is a parentRef with its defaults.
type gwParent struct{ group, kind, name, namespace, section, port string }

type gwRule struct {
	field      string // spec.rules[<i>]
	key        string // <route wkey>/<i>: the rule key of weighted.map and the header and CORS maps
	matches    []gwMatch
	filters    []gwFilter
	backends   []gwBackendRef
	retries    int
	retryCodes []int
	timeouts   [][]string // {"request", d}, {"backendRequest", d}; nil without timeouts
}

// gwMatch is a match: its path (ptype, pvalue, and the field of the value), its
// header and query conditions ([type, name, value]) and method.
type gwMatch struct {
	ptype, pvalue, pfield, field string
	headers, query               [][]string
	method                       string
}

// gwFilter is a rule's or a backendRef's filter. request and response are header
// modifiers {set: [[name, value]...], add: [...], remove: [names]}; redirect and
// rewrite {scheme, hostname, port, code, pathType, full, prefix}; cors {origins,
// credentials, methods, headers, expose, maxAge}.
type gwFilter struct {
	typ, field        string
	request, response map[string]any
	redirect, rewrite map[string]string
	cors              map[string]any
}

// gwBackendRef is a backendRef with its defaults and its own filters.
type gwBackendRef struct {
	group, kind, name, namespace string
	port, weight                 int
	field                        string
	filters                      []gwFilter
	target                       string // gw_<namespace>_<name>_<port>: its backend's name, before what else makes it its own
}

// nativeRoute is route namespace/name of store (an HTTPRoute or a GRPCRoute, by
// native) in its native form, nil without it, its metadata or its spec. It is read by
// key like GetSingle, and converted once per object version (a form the object
// keeps, forms.go): an unchanged route is the very same value in the next render,
// so the values remembered for it (its share) are reused. Converting it in the
// template was a fifth of a full render at 5,000 routes.
func (rd reader) nativeRoute(store string, kind formKind, ns, name string, native func(raw map[string]any) *gwRoute) *gwRoute {
	objs := rd.getSingle(store, []string{ns, name})
	if len(objs) == 0 {
		return nil
	}
	return formOf(objs[0], kind, native)
}

// httpRouteForm and grpcRouteForm are a route's native form, nil without its
// metadata or spec.
func httpRouteForm(raw map[string]any) *gwRoute { return routeForm(raw, httpRouteNative) }

func grpcRouteForm(raw map[string]any) *gwRoute { return routeForm(raw, grpcRouteNative) }

func routeForm(raw map[string]any, native func(meta, spec map[string]any) *gwRoute) *gwRoute {
	meta, _ := raw["metadata"].(map[string]any)
	spec, _ := raw["spec"].(map[string]any)
	if meta == nil || spec == nil {
		return nil
	}
	return native(meta, spec)
}

// httpRouteNative is the native form of an HTTPRoute. Lists the object has, even
// empty ones, stay non-nil (typed access gives the same), so JSON of them is
// unchanged.
func httpRouteNative(meta, spec map[string]any) *gwRoute {
	ns, name := rawString(meta["namespace"]), rawString(meta["name"])
	var rules []gwRule
	for ri, rule := range rawMaps(spec["rules"]) {
		field := "spec.rules[" + strconv.Itoa(ri) + "]"
		r := gwRule{field: field, key: "@h/" + ns + "/" + name + "/" + strconv.Itoa(ri), matches: routeMatchesNative(rule, field), filters: filtersNative(rule, field),
			backends: backendRefsNative(rule, field, ns)}
		if retry, ok := rule["retry"].(map[string]any); ok {
			r.retries = toInt(retry["attempts"])
			for _, c := range rawList(retry["codes"]) {
				r.retryCodes = append(r.retryCodes, toInt(c))
			}
		}
		if t, ok := rule["timeouts"].(map[string]any); ok {
			r.timeouts = [][]string{{"request", rawString(t["request"])}, {"backendRequest", rawString(t["backendRequest"])}}
		}
		rules = append(rules, r)
	}
	created := rawString(meta["creationTimestamp"])
	return &gwRoute{kind: "HTTPRoute", id: "HTTPRoute " + ns + "/" + name, wkey: "@h/" + ns + "/" + name,
		namespace: ns, name: name, parents: parentRefsNative(ns, spec["parentRefs"]), hostnames: hostnamesNative(spec),
		rules: rules, created: created, order: routeOrderEntry{key: created + " " + ns + "/" + name + " HTTPRoute", item: []string{"HTTPRoute", ns, name}}}
}

// grpcRouteNative is the native form of a GRPCRoute: a method match is a path match
// (/service/method), the servers speak HTTP/2.
func grpcRouteNative(meta, spec map[string]any) *gwRoute {
	ns, name := rawString(meta["namespace"]), rawString(meta["name"])
	id := "GRPCRoute " + ns + "/" + name
	var rules []gwRule
	for ri, rule := range rawMaps(spec["rules"]) {
		field := "spec.rules[" + strconv.Itoa(ri) + "]"
		matches, err := grpcMatchesNative(rule, field)
		if err != "" {
			return &gwRoute{err: id + ": " + err}
		}
		rules = append(rules, gwRule{field: field, key: "@g/" + ns + "/" + name + "/" + strconv.Itoa(ri), matches: matches, filters: filtersNative(rule, field),
			backends: backendRefsNative(rule, field, ns)})
	}
	return &gwRoute{kind: "GRPCRoute", id: id, wkey: "@g/" + ns + "/" + name, namespace: ns, name: name,
		parents: parentRefsNative(ns, spec["parentRefs"]), hostnames: hostnamesNative(spec), rules: rules, h2: true,
		created: rawString(meta["creationTimestamp"])}
}

var (
	grpcService = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*$`)
	grpcMethod  = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*$`)
)

// grpcMatchesNative are a GRPCRoute rule's matches as path matches; a rule without
// any matches every path. The error names the field of a service or method name that
// is not one.
func grpcMatchesNative(rule map[string]any, field string) ([]gwMatch, string) {
	var matches []gwMatch
	for mi, m := range rawMaps(rule["matches"]) {
		mfield := field + ".matches[" + strconv.Itoa(mi) + "]"
		ptype, pvalue := "PathPrefix", "/"
		gm, _ := m["method"].(map[string]any)
		svc, meth := rawString(gm["service"]), rawString(gm["method"])
		switch {
		case svc == "" && meth == "":
		case rawString(gm["type"]) == "RegularExpression":
			ptype, pvalue = "RegularExpression", "/(?:"+orString(svc, "[^/]+")+")/(?:"+orString(meth, "[^/]+")+")"
		case svc != "" && !grpcService.MatchString(svc):
			return nil, mfield + ".method.service: " + toJSON(svc) + " is not a gRPC service name"
		case meth != "" && !grpcMethod.MatchString(meth):
			return nil, mfield + ".method.method: " + toJSON(meth) + " is not a gRPC method name"
		case svc != "" && meth != "":
			ptype, pvalue = "Exact", "/"+svc+"/"+meth
		case svc != "":
			ptype, pvalue = "PathPrefix", "/"+svc
		default:
			ptype, pvalue = "RegularExpression", "/[^/]+/"+meth
		}
		matches = append(matches, gwMatch{ptype: ptype, pvalue: pvalue, pfield: mfield + ".method", field: mfield,
			headers: typedNameValues(m["headers"])})
	}
	if len(matches) == 0 {
		matches = append(matches, gwMatch{ptype: "PathPrefix", pvalue: "/", pfield: field, field: field})
	}
	return matches, ""
}

// hostnamesNative are a route's hostnames (nil for none).
func hostnamesNative(spec map[string]any) []string {
	var hosts []string
	for _, h := range rawList(spec["hostnames"]) {
		hosts = append(hosts, rawString(h))
	}
	return hosts
}

// filtersNative are the filters of a route's rule.
func filtersNative(rule map[string]any, field string) []gwFilter {
	var filters []gwFilter
	for fi, f := range rawMaps(rule["filters"]) {
		filters = append(filters, ruleFilterNative(f, field+".filters["+strconv.Itoa(fi)+"]"))
	}
	return filters
}

// backendRefsNative are the backendRefs of a route's rule, with their defaults and
// their own (header modifier) filters.
func backendRefsNative(rule map[string]any, field, ns string) []gwBackendRef {
	var backends []gwBackendRef
	for bi, b := range rawMaps(rule["backendRefs"]) {
		bfield := field + ".backendRefs[" + strconv.Itoa(bi) + "]"
		var bfilters []gwFilter
		for fi, f := range rawMaps(b["filters"]) {
			nf := gwFilter{typ: rawString(f["type"]), field: bfield + ".filters[" + strconv.Itoa(fi) + "]"}
			headerModifiersNative(&nf, f)
			bfilters = append(bfilters, nf)
		}
		ref := gwBackendRef{group: rawString(b["group"]), kind: orString(b["kind"], "Service"),
			name: rawString(b["name"]), namespace: orString(b["namespace"], ns), port: toInt(b["port"]),
			weight: toInt(b["weight"]), field: bfield, filters: bfilters}
		ref.target = "gw_" + ref.namespace + "_" + ref.name + "_" + strconv.Itoa(ref.port)
		backends = append(backends, ref)
	}
	return backends
}

// routeMatchesNative are an HTTPRoute rule's matches; a rule without any matches
// every path.
func routeMatchesNative(rule map[string]any, field string) []gwMatch {
	var matches []gwMatch
	for mi, m := range rawMaps(rule["matches"]) {
		ptype, pvalue := "PathPrefix", "/"
		if p, ok := m["path"].(map[string]any); ok {
			ptype, pvalue = orString(p["type"], ptype), orString(p["value"], pvalue)
		}
		mfield := field + ".matches[" + strconv.Itoa(mi) + "]"
		matches = append(matches, gwMatch{ptype: ptype, pvalue: pvalue, pfield: mfield + ".path.value",
			field: mfield, headers: typedNameValues(m["headers"]), query: typedNameValues(m["queryParams"]),
			method: rawString(m["method"])})
	}
	if len(matches) == 0 {
		matches = append(matches, gwMatch{ptype: "PathPrefix", pvalue: "/", pfield: field, field: field})
	}
	return matches
}

// ruleFilterNative is one filter of an HTTPRoute rule.
func ruleFilterNative(f map[string]any, field string) gwFilter {
	nf := gwFilter{typ: rawString(f["type"]), field: field}
	headerModifiersNative(&nf, f)
	if rr, ok := f["requestRedirect"].(map[string]any); ok {
		d := map[string]string{"scheme": rawString(rr["scheme"]), "hostname": rawString(rr["hostname"]),
			"port": strconv.Itoa(toInt(rr["port"])), "code": strconv.Itoa(toInt(rr["statusCode"]))}
		pathModifierNative(d, rr)
		nf.redirect = d
	}
	if uw, ok := f["urlRewrite"].(map[string]any); ok {
		d := map[string]string{"hostname": rawString(uw["hostname"])}
		pathModifierNative(d, uw)
		nf.rewrite = d
	}
	if c, ok := f["cors"].(map[string]any); ok {
		credentials, _ := c["allowCredentials"].(bool)
		nf.cors = map[string]any{"origins": rawStrings(c["allowOrigins"]), "credentials": credentials,
			"methods": rawStrings(c["allowMethods"]), "headers": rawStrings(c["allowHeaders"]),
			"expose": rawStrings(c["exposeHeaders"]), "maxAge": toInt(c["maxAge"])}
	}
	return nf
}

// headerModifiersNative sets a filter's request and response header modifiers as
// {set: [[name, value]...], add: [...], remove: [names]}.
func headerModifiersNative(nf *gwFilter, f map[string]any) {
	ops := func(m map[string]any) map[string]any {
		return map[string]any{"set": nameValues(m["set"]), "add": nameValues(m["add"]), "remove": rawStrings(m["remove"])}
	}
	if m, ok := f["requestHeaderModifier"].(map[string]any); ok {
		nf.request = ops(m)
	}
	if m, ok := f["responseHeaderModifier"].(map[string]any); ok {
		nf.response = ops(m)
	}
}

// pathModifierNative adds a redirect's or rewrite's path modifier to d.
func pathModifierNative(d map[string]string, f map[string]any) {
	if p, ok := f["path"].(map[string]any); ok {
		d["pathType"], d["full"], d["prefix"] = rawString(p["type"]), rawString(p["replaceFullPath"]), rawString(p["replacePrefixMatch"])
	}
}

// parentRefsNative are a route's parentRefs with their defaults.
func parentRefsNative(ns string, refs any) []gwParent {
	var out []gwParent
	for _, p := range rawMaps(refs) {
		out = append(out, gwParent{group: orString(p["group"], gatewayGroup), kind: orString(p["kind"], "Gateway"),
			name: rawString(p["name"]), namespace: orString(p["namespace"], ns), section: rawString(p["sectionName"]),
			port: strconv.Itoa(toInt(p["port"]))})
	}
	return out
}

// nameValues are {name, value} objects as [name, value] pairs.
func nameValues(v any) [][]string {
	var out [][]string
	for _, h := range rawMaps(v) {
		out = append(out, []string{rawString(h["name"]), rawString(h["value"])})
	}
	return out
}

// typedNameValues are header or query parameter matches as [type, name, value],
// the type Exact when unset.
func typedNameValues(v any) [][]string {
	var out [][]string
	for _, h := range rawMaps(v) {
		out = append(out, []string{orString(h["type"], "Exact"), rawString(h["name"]), rawString(h["value"])})
	}
	return out
}

// orString is the string v, or def when it is empty or not a string.
func orString(v any, def string) string {
	if s := rawString(v); s != "" {
		return s
	}
	return def
}

// rawList is a decoded JSON array; nil for anything else.
func rawList(v any) []any {
	l, _ := v.([]any)
	return l
}

// rawMaps are the objects of a decoded JSON array (an element that is not an object
// reads as an empty one).
func rawMaps(v any) []map[string]any {
	l := rawList(v)
	if len(l) == 0 {
		return nil
	}
	out := make([]map[string]any, len(l))
	for i, x := range l {
		out[i], _ = x.(map[string]any)
	}
	return out
}

// rawStrings is a decoded array of strings: nil when absent, empty (not nil) when
// the array is, as typed access gives it.
func rawStrings(v any) []string {
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = rawString(x)
	}
	return out
}
