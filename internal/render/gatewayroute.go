package render

import (
	"regexp"
	"strconv"
)

// gatewayGroup is the Gateway API group a parentRef names when it names none.
const gatewayGroup = "gateway.networking.k8s.io"

// nativeRoute is route namespace/name of store (an HTTPRoute or a GRPCRoute, by
// native) in the gateway library's native form (docs/templates.md), nil without it,
// its metadata or its spec. It is read by key like GetSingle, and converted once per
// object version: an unchanged route is the very same map in the next render, so the
// values remembered for it (its share) are reused. Converting it in the template was
// a fifth of a full render at 5,000 routes.
func (e *Engine) nativeRoute(store, prefix, ns, name string, native func(meta, spec map[string]any) map[string]any) map[string]any {
	objs := e.st.getSingle(store, []string{ns, name})
	if len(objs) == 0 {
		return nil
	}
	raw := objs[0].Raw
	meta, _ := raw["metadata"].(map[string]any)
	spec, _ := raw["spec"].(map[string]any)
	if meta == nil || spec == nil {
		return nil
	}
	key := prefix + rawString(meta["namespace"]) + "/" + rawString(meta["name"])
	if v, ok := e.cached(key, raw); ok {
		return v.(map[string]any)
	}
	return e.endCached(key, native(meta, spec)).(map[string]any)
}

// httpRouteNative is the native form of an HTTPRoute: defaults filled in, every
// part with its field path for error messages. Lists the object has, even empty
// ones, stay non-nil (typed access gives the same), so JSON of them is unchanged.
func httpRouteNative(meta, spec map[string]any) map[string]any {
	ns, name := rawString(meta["namespace"]), rawString(meta["name"])
	var rules []map[string]any
	for ri, rule := range rawMaps(spec["rules"]) {
		field := "spec.rules[" + strconv.Itoa(ri) + "]"
		retries, retryCodes := 0, []int(nil)
		if retry, ok := rule["retry"].(map[string]any); ok {
			retries = toInt(retry["attempts"])
			for _, c := range rawList(retry["codes"]) {
				retryCodes = append(retryCodes, toInt(c))
			}
		}
		var timeouts [][]string
		if t, ok := rule["timeouts"].(map[string]any); ok {
			timeouts = [][]string{{"request", rawString(t["request"])}, {"backendRequest", rawString(t["backendRequest"])}}
		}
		rules = append(rules, map[string]any{"matches": routeMatchesNative(rule, field), "filters": filtersNative(rule, field),
			"backends": backendRefsNative(rule, field, ns), "retries": retries, "retryCodes": retryCodes, "timeouts": timeouts})
	}
	return map[string]any{"kind": "HTTPRoute", "id": "HTTPRoute " + ns + "/" + name, "wkey": "@h/" + ns + "/" + name,
		"namespace": ns, "name": name, "parents": parentRefsNative(ns, spec["parentRefs"]), "hostnames": hostnamesNative(spec),
		"rules": rules, "h2": false, "created": rawString(meta["creationTimestamp"])}
}

// grpcRouteNative is the native form of a GRPCRoute: a method match is a path match
// (/service/method), the servers speak HTTP/2.
func grpcRouteNative(meta, spec map[string]any) map[string]any {
	ns, name := rawString(meta["namespace"]), rawString(meta["name"])
	id := "GRPCRoute " + ns + "/" + name
	var rules []map[string]any
	for ri, rule := range rawMaps(spec["rules"]) {
		field := "spec.rules[" + strconv.Itoa(ri) + "]"
		matches, err := grpcMatchesNative(rule, field)
		if err != "" {
			return map[string]any{"error": id + ": " + err}
		}
		rules = append(rules, map[string]any{"matches": matches, "filters": filtersNative(rule, field),
			"backends": backendRefsNative(rule, field, ns), "retries": 0, "retryCodes": []int(nil), "timeouts": [][]string(nil)})
	}
	return map[string]any{"kind": "GRPCRoute", "id": id, "wkey": "@g/" + ns + "/" + name, "namespace": ns, "name": name,
		"parents": parentRefsNative(ns, spec["parentRefs"]), "hostnames": hostnamesNative(spec), "rules": rules, "h2": true,
		"created": rawString(meta["creationTimestamp"])}
}

var (
	grpcService = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*$`)
	grpcMethod  = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*$`)
)

// grpcMatchesNative are a GRPCRoute rule's matches as path matches; a rule without
// any matches every path. The error names the field of a service or method name that
// is not one.
func grpcMatchesNative(rule map[string]any, field string) ([]map[string]any, string) {
	var matches []map[string]any
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
		matches = append(matches, map[string]any{"ptype": ptype, "pvalue": pvalue, "pfield": mfield + ".method", "field": mfield,
			"headers": typedNameValues(m["headers"]), "query": [][]string(nil), "method": ""})
	}
	if len(matches) == 0 {
		matches = append(matches, map[string]any{"ptype": "PathPrefix", "pvalue": "/", "pfield": field, "field": field,
			"headers": [][]string(nil), "query": [][]string(nil), "method": ""})
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
func filtersNative(rule map[string]any, field string) []map[string]any {
	var filters []map[string]any
	for fi, f := range rawMaps(rule["filters"]) {
		filters = append(filters, ruleFilterNative(f, field+".filters["+strconv.Itoa(fi)+"]"))
	}
	return filters
}

// backendRefsNative are the backendRefs of a route's rule, with their defaults and
// their own (header modifier) filters.
func backendRefsNative(rule map[string]any, field, ns string) []map[string]any {
	var backends []map[string]any
	for bi, b := range rawMaps(rule["backendRefs"]) {
		bfield := field + ".backendRefs[" + strconv.Itoa(bi) + "]"
		var bfilters []map[string]any
		for fi, f := range rawMaps(b["filters"]) {
			nf := map[string]any{"type": rawString(f["type"]), "field": bfield + ".filters[" + strconv.Itoa(fi) + "]"}
			headerModifiersNative(nf, f)
			bfilters = append(bfilters, nf)
		}
		backends = append(backends, map[string]any{"group": rawString(b["group"]), "kind": orString(b["kind"], "Service"),
			"name": rawString(b["name"]), "namespace": orString(b["namespace"], ns), "port": toInt(b["port"]),
			"weight": toInt(b["weight"]), "field": bfield, "filters": bfilters})
	}
	return backends
}

// routeMatchesNative are an HTTPRoute rule's matches; a rule without any matches
// every path.
func routeMatchesNative(rule map[string]any, field string) []map[string]any {
	var matches []map[string]any
	for mi, m := range rawMaps(rule["matches"]) {
		ptype, pvalue := "PathPrefix", "/"
		if p, ok := m["path"].(map[string]any); ok {
			ptype, pvalue = orString(p["type"], ptype), orString(p["value"], pvalue)
		}
		mfield := field + ".matches[" + strconv.Itoa(mi) + "]"
		matches = append(matches, map[string]any{"ptype": ptype, "pvalue": pvalue, "pfield": mfield + ".path.value",
			"field": mfield, "headers": typedNameValues(m["headers"]), "query": typedNameValues(m["queryParams"]),
			"method": rawString(m["method"])})
	}
	if len(matches) == 0 {
		matches = append(matches, map[string]any{"ptype": "PathPrefix", "pvalue": "/", "pfield": field, "field": field,
			"headers": [][]string(nil), "query": [][]string(nil), "method": ""})
	}
	return matches
}

// ruleFilterNative is one filter of an HTTPRoute rule.
func ruleFilterNative(f map[string]any, field string) map[string]any {
	nf := map[string]any{"type": rawString(f["type"]), "field": field}
	headerModifiersNative(nf, f)
	if rr, ok := f["requestRedirect"].(map[string]any); ok {
		d := map[string]string{"scheme": rawString(rr["scheme"]), "hostname": rawString(rr["hostname"]),
			"port": strconv.Itoa(toInt(rr["port"])), "code": strconv.Itoa(toInt(rr["statusCode"]))}
		pathModifierNative(d, rr)
		nf["redirect"] = d
	}
	if uw, ok := f["urlRewrite"].(map[string]any); ok {
		d := map[string]string{"hostname": rawString(uw["hostname"])}
		pathModifierNative(d, uw)
		nf["rewrite"] = d
	}
	if c, ok := f["cors"].(map[string]any); ok {
		credentials, _ := c["allowCredentials"].(bool)
		nf["cors"] = map[string]any{"origins": rawStrings(c["allowOrigins"]), "credentials": credentials,
			"methods": rawStrings(c["allowMethods"]), "headers": rawStrings(c["allowHeaders"]),
			"expose": rawStrings(c["exposeHeaders"]), "maxAge": toInt(c["maxAge"])}
	}
	return nf
}

// headerModifiersNative adds a filter's request and response header modifiers as
// {set: [[name, value]...], add: [...], remove: [names]}.
func headerModifiersNative(nf, f map[string]any) {
	for _, fk := range [...][2]string{{"requestHeaderModifier", "request"}, {"responseHeaderModifier", "response"}} {
		if m, ok := f[fk[0]].(map[string]any); ok {
			nf[fk[1]] = map[string]any{"set": nameValues(m["set"]), "add": nameValues(m["add"]), "remove": rawStrings(m["remove"])}
		}
	}
}

// pathModifierNative adds a redirect's or rewrite's path modifier to d.
func pathModifierNative(d map[string]string, f map[string]any) {
	if p, ok := f["path"].(map[string]any); ok {
		d["pathType"], d["full"], d["prefix"] = rawString(p["type"]), rawString(p["replaceFullPath"]), rawString(p["replacePrefixMatch"])
	}
}

// parentRefsNative are a route's parentRefs with their defaults:
// {group, kind, name, namespace, section, port}.
func parentRefsNative(ns string, refs any) []map[string]string {
	var out []map[string]string
	for _, p := range rawMaps(refs) {
		out = append(out, map[string]string{"group": orString(p["group"], gatewayGroup), "kind": orString(p["kind"], "Gateway"),
			"name": rawString(p["name"]), "namespace": orString(p["namespace"], ns), "section": rawString(p["sectionName"]),
			"port": strconv.Itoa(toInt(p["port"]))})
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
