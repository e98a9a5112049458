package render

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/open2b/scriggo/native"
)

// gatewayRuleValue is the value rule ri of route (native form) routes to: a backend,
// MULTI:<key> (weighted.map lines), or the 500 backend. A rule of an HTTPRoute with a
// CORS filter or rule-level header modifiers always routes through its rule key
// (MULTI:<rk>, a weighted.map line of weight 1 when it has one backend), so that the
// frontend finds its CORS and header lines by txn.wkey whatever backend the rule
// shares. Problems are s.Problem.
func (rd reader) gatewayRuleValue(env native.Env, s *GatewayState, route *gwRoute, ri int, rule *gwRule) string {
	v := rd.gatewayRuleTarget(env, s, route, ri, rule)
	if s.Problem != "" || route.kind != "HTTPRoute" {
		return v
	}
	id := route.id
	rk := rule.key
	if !gatewayCorsRule(env, s, id, rule, rk) && !s.Seen["rh "+rk] {
		return v
	}
	if strings.HasPrefix(v, "MULTI:") {
		return v
	}
	if s.firstSeen("w " + rk) {
		s.Weighted = append(s.Weighted, mapKey(env, rk, id+": metadata.name")+" 1",
			mapKey(env, rk+"/0", id+": metadata.name")+" "+mapValue(env, v, id+": backendRefs"))
	}
	return "MULTI:" + rk
}

// gatewayRuleTarget is the backend (or MULTI:<key>) a rule routes to: its filters'
// directives, timeouts and retries make the backends its own; a redirect answers in a
// backend of its own; an unsupported filter or a problem answers 500.
func (rd reader) gatewayRuleTarget(env native.Env, s *GatewayState, route *gwRoute, ri int, rule *gwRule) string {
	id := route.id
	field := rule.field
	f, ok := gatewayRuleFilters(env, s, route, rule)
	if !ok || s.Problem != "" {
		return gateway500
	}
	if f.unsupported != "" {
		s.Notes = append(s.Notes, id+" "+field+": "+f.unsupported+" is not supported; the rule answers 500")
		s.Need500 = true
		return gateway500
	}
	dirs := f.dirs
	// timeouts: the smaller of request and backendRequest bounds the server's answer
	timeoutMs := 0
	for _, t := range rule.timeouts {
		if t[1] == "" {
			continue
		}
		ms := durationMs(t[1])
		if ms < 0 {
			gatewayBad(s, id+": "+field+".timeouts."+t[0]+": "+toJSON(t[1])+" is not a Gateway API duration")
			return gateway500
		}
		if ms > 0 && (timeoutMs == 0 || ms < timeoutMs) {
			timeoutMs = ms
		}
	}
	// retry-on: what the defaults retry (connection failures, empty answers,
	// timeouts), without timeouts when the rule has one (it bounds the whole request:
	// an attempt that timed out is not retried), plus the retry's status codes
	// (experimental retry.codes; HAProxy 2.6 retries 401, 403, 404, 408, 425 and
	// 500-504)
	retryOn := ""
	if timeoutMs > 0 {
		dirs = append(dirs, "timeout server "+strconv.Itoa(timeoutMs)+"ms")
		retryOn = "conn-failure empty-response"
	}
	if retries := rule.retries; s.Experimental && retries > 0 {
		dirs = append(dirs, "retries "+strconv.Itoa(retries))
		if retryOn == "" {
			retryOn = "conn-failure empty-response response-timeout"
		}
		for _, c := range rule.retryCodes {
			if c == 401 || c == 403 || c == 404 || c == 408 || c == 425 || c >= 500 && c <= 504 {
				retryOn += " " + strconv.Itoa(c)
			} else {
				s.Notes = append(s.Notes, id+" "+field+".retry.codes: "+strconv.Itoa(c)+
					" is not a status HAProxy 2.6 retries on (401, 403, 404, 408, 425, 500-504); left out")
			}
		}
	}
	if retryOn != "" {
		dirs = append(dirs, "retry-on "+retryOn)
	}
	if len(f.redirect) > 0 {
		all := append(append([]string(nil), dirs...), f.redirect...)
		name := "gwr_" + sha256Hex(strings.Join(all, "\n"))[:12] // (a config word)
		if !s.BackendIdx[name] {
			s.BackendIdx[name] = true
			s.Backends = append(s.Backends, &GatewayBackend{Name: name, Directives: all})
		}
		return name
	}
	suffix := ""
	if len(dirs) > 0 {
		suffix = "_" + sha256Hex(strings.Join(dirs, "\n"))[:8]
	}
	var names []string
	var weights []int
	for i := range rule.backends {
		b := &rule.backends[i]
		w := b.weight
		if w <= 0 {
			continue
		}
		target := rd.gatewayBackendRef(env, s, route, b, dirs, suffix)
		s.Need500 = s.Need500 || target == gateway500
		names = append(names, target)
		weights = append(weights, w)
	}
	if len(names) == 0 {
		s.Need500 = true
		return gateway500
	}
	// rule-level header modifiers: gateway-backend-headers.map lines keyed by the
	// rule, which then routes through its rule key (gatewayRuleValue)
	if len(f.hdrOps) > 0 {
		rk := rule.key
		s.Seen["rh "+rk] = true
		for _, h := range f.hdrOps {
			s.HeaderLines = gatewayHeaderMapLines(env, s, id, h.field, rk, h.phase, h.ops, s.HeaderLines)
		}
	}
	return gatewayWeightedValue(env, s, route, ri, names, weights)
}

// ruleFilters is what a rule's filters make: backend directives (without the header
// modifiers that are map lines: hdrOps), redirect rules, and what is not supported
// (the rule answers 500).
type ruleFilters struct {
	dirs, redirect []string
	unsupported    string
	hdrOps         []headerOpsAt
}

// headerOpsAt are a filter's header modifiers ({set, add, remove}) for phase q
// (request) or r (response), and their field.
type headerOpsAt struct {
	phase, field string
	ops          map[string]any
}

// gatewayRuleFilters reads a rule's filters; false when the rule answers 500
// because of a problem (s.Problem). Header modifiers become map lines keyed by the
// rule instead of directives when they can (an HTTPRoute, no redirect, values without
// blanks at either end, a few KB): adding such a rule then changes map lines only.
func gatewayRuleFilters(env native.Env, s *GatewayState, route *gwRoute, rule *gwRule) (ruleFilters, bool) {
	id := route.id
	var out ruleFilters
	var allDirs []string // every directive, in order
	mappable := route.kind == "HTTPRoute"
	firstPrefix, sawPrefix := "", false
	for _, m := range rule.matches {
		if m.ptype == "PathPrefix" {
			firstPrefix, sawPrefix = strings.TrimRight(m.pvalue, "/"), true
			break
		}
	}
	for _, f := range rule.filters {
		ftype := f.typ
		switch {
		case ftype == "RequestHeaderModifier" && f.request != nil, ftype == "ResponseHeaderModifier" && f.response != nil:
			phase, letter, ops, name := "http-request", "q", f.request, ".requestHeaderModifier"
			if ftype == "ResponseHeaderModifier" {
				phase, letter, ops, name = "http-response", "r", f.response, ".responseHeaderModifier"
			}
			field := f.field + name
			allDirs = gatewayHeaderDirectives(env, s, id, field, phase, ops, allDirs)
			out.hdrOps = append(out.hdrOps, headerOpsAt{phase: letter, field: field, ops: ops})
			mappable = mappable && headerOpsMappable(ops)
		case ftype == "CORS" && f.cors != nil && route.kind == "HTTPRoute":
			// map lines keyed by the rule: gatewayCorsRule
		case ftype == "URLRewrite" && f.rewrite != nil, ftype == "RequestRedirect" && f.redirect != nil:
			d := f.rewrite
			if ftype == "RequestRedirect" {
				d = f.redirect
			}
			ff := f.field
			h := strings.ToLower(d["hostname"])
			if h != "" && !isDNSHost(h) {
				gatewayBad(s, id+": "+ff+": hostname "+toJSON(d["hostname"])+" is not a valid hostname")
				return ruleFilters{}, false
			}
			pathDirs, unsupported, ok := pathModifierDirectives(env, s, id, ff, d, firstPrefix, sawPrefix)
			if !ok {
				return ruleFilters{}, false
			}
			if unsupported != "" {
				out.unsupported = unsupported
			}
			if ftype == "URLRewrite" {
				if h != "" {
					hostDir := "http-request set-header Host " + lfWord(env, h, id+": "+ff+".hostname")
					out.dirs, allDirs = append(out.dirs, hostDir), append(allDirs, hostDir)
				}
				out.dirs, allDirs = append(out.dirs, pathDirs...), append(allDirs, pathDirs...)
				continue
			}
			redirect, ok := redirectRules(s, id, ff, d, h, pathDirs)
			if !ok {
				return ruleFilters{}, false
			}
			out.redirect = append(out.redirect, redirect...)
		default:
			out.unsupported = "filter " + ftype
		}
	}
	// a redirect answers in its own backend: its header modifiers stay directives
	if !mappable || len(out.redirect) > 0 {
		out.dirs, out.hdrOps = allDirs, nil
	}
	return out, true
}

// pathModifierDirectives are the directives of a rewrite's or redirect's path
// modifier d, what of it is not supported, and false after a problem (s.Problem).
func pathModifierDirectives(env native.Env, s *GatewayState, id, ff string, d map[string]string, firstPrefix string, sawPrefix bool) ([]string, string, bool) {
	switch d["pathType"] {
	case "":
		return nil, "", true
	case "ReplaceFullPath":
		if !strings.HasPrefix(d["full"], "/") || regexMatch(`[\s#\x00-\x1f]`, d["full"]) {
			gatewayBad(s, id+": "+ff+".path.replaceFullPath: "+toJSON(d["full"])+" must start with / and hold no whitespace or '#'")
			return nil, "", false
		}
		return []string{"http-request set-path " + lfWord(env, d["full"], id+": "+ff+".path.replaceFullPath")}, "", true
	case "ReplacePrefixMatch":
		p := d["prefix"]
		if !strings.HasPrefix(p, "/") || regexMatch(`[\s#\x00-\x1f\\]`, p) {
			gatewayBad(s, id+": "+ff+".path.replacePrefixMatch: "+toJSON(p)+" must start with / and hold no whitespace, '#' or '\\'")
			return nil, "", false
		}
		unsupported := ""
		if !sawPrefix {
			unsupported = "replacePrefixMatch without a PathPrefix match"
		}
		// element-wise: /foo → <p>, /foo/x → <p>/x
		if p == "/" {
			return []string{"http-request replace-path " + cfgWord(env, "^"+regexp.QuoteMeta(firstPrefix)+"/?(.*)$", id+": "+ff+".path") +
				" " + lfWord(env, `/\1`)}, unsupported, true
		}
		return []string{"http-request replace-path " + cfgWord(env, "^"+regexp.QuoteMeta(firstPrefix)+"(/.*)?$", id+": "+ff+".path") +
			" " + lfWord(env, strings.TrimRight(p, "/")+`\1`, id+": "+ff+".path.replacePrefixMatch")}, unsupported, true
	}
	return nil, "path modifier type " + d["pathType"], true
}

// redirectRules are the rules of a RequestRedirect d (host h, lower-case), after its
// path directives; false after a problem (s.Problem).
func redirectRules(s *GatewayState, id, ff string, d map[string]string, h string, pathDirs []string) ([]string, bool) {
	scheme, port, code := d["scheme"], d["port"], d["code"]
	if scheme != "" && scheme != "http" && scheme != "https" {
		gatewayBad(s, id+": "+ff+".scheme: "+toJSON(scheme)+" is not http or https")
		return nil, false
	}
	if code == "0" {
		code = "302"
	}
	if code != "301" && code != "302" && code != "303" && code != "307" && code != "308" {
		gatewayBad(s, id+": "+ff+".statusCode: "+code+" is not 301, 302, 303, 307 or 308")
		return nil, false
	}
	loc := "%[ssl_fc,iif(https,http)]://"
	if scheme != "" {
		loc = scheme + "://"
	}
	if h != "" {
		loc += h
	} else {
		loc += "%[var(txn.host)]"
	}
	out := append([]string(nil), pathDirs...)
	if port == "0" && scheme == "" {
		// neither scheme nor port: the listener's port, left out when it is the
		// scheme's well-known one
		out = append(out, "http-request redirect prefix "+loc+" code "+code+" if { ssl_fc } { dst_port 443 } || !{ ssl_fc } { dst_port 80 }")
		loc += ":%[dst_port]"
	} else if port != "0" && !(scheme == "http" && port == "80" || scheme == "https" && port == "443") {
		loc += ":" + port
	}
	return append(out, "http-request redirect prefix "+loc+" code "+code), true
}

// gatewayHeaderDirectives appends header modifiers ops as backend directives of
// phase (http-request or http-response) to dirs; after a header name or value
// HAProxy cannot take (s.Problem) it returns dirs as they were.
func gatewayHeaderDirectives(env native.Env, s *GatewayState, id, field, phase string, ops map[string]any, dirs []string) []string {
	var out []string
	for _, op := range [...]string{"set", "add"} {
		hs, _ := ops[op].([][]string)
		for _, h := range hs {
			if p := headerProblem(id, field, h[0], h[1]); p != "" {
				gatewayBad(s, p)
				return dirs
			}
			out = append(out, phase+" "+op+"-header "+cfgWord(env, h[0], id+": "+field)+" "+lfWord(env, h[1], id+": "+field))
		}
	}
	names, _ := ops["remove"].([]string)
	for _, n := range names {
		if p := headerProblem(id, field, n, ""); p != "" {
			gatewayBad(s, p)
			return dirs
		}
		out = append(out, phase+" del-header "+cfgWord(env, n, id+": "+field))
	}
	return append(dirs, out...)
}

// headerOpsMappable reports whether header modifiers can be map lines keyed by the
// rule (read by the frontend's fixed rules): values that are not empty and have no
// blanks at either end, and few enough bytes that the percent-encoded line stays far
// below a map line's limit.
func headerOpsMappable(ops map[string]any) bool {
	size := 0
	for _, op := range [...]string{"set", "add"} {
		hs, _ := ops[op].([][]string)
		for _, h := range hs {
			size += len(h[0]) + len(h[1]) + 2
			if h[1] == "" || strings.TrimSpace(h[1]) != h[1] || size > 4000 {
				return false
			}
		}
	}
	return true
}

// durationMs is a Gateway API duration (1h30m, 500ms: at most four parts of up to
// five digits) in milliseconds, or -1.
func durationMs(d string) int {
	if !regexMatch(`^([0-9]{1,5}(h|m|s|ms)){1,4}$`, d) {
		return -1
	}
	total, n := 0, 0
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
			continue
		}
		switch {
		case c == 'h':
			total += n * 3600000
		case c == 's':
			total += n * 1000
		case i+1 < len(d) && d[i+1] == 's':
			total += n
			i++
		default:
			total += n * 60000
		}
		n = 0
	}
	return total
}

// gatewayWeightedValue is a rule's value for backends names with weights: the
// backend when there is one, else MULTI:<key> with the key's weighted.map lines
// (weights reduced by their greatest common divisor, at most 1,000 slots).
func gatewayWeightedValue(env native.Env, s *GatewayState, route *gwRoute, ri int, names []string, weights []int) string {
	same := true
	for _, n := range names {
		same = same && n == names[0]
	}
	if same {
		return names[0]
	}
	id := route.id
	g := 0
	for _, w := range weights {
		g = gcd(w, g)
	}
	total := 0
	for i := range weights {
		weights[i] /= g
		total += weights[i]
	}
	if total > 1000 {
		t2 := 0
		for i := range weights {
			weights[i] = max(weights[i]*1000/total, 1)
			t2 += weights[i]
		}
		total = t2
	}
	wkey := mapKey(env, route.rules[ri].key, id+": metadata.name")
	if s.firstSeen("w " + wkey) {
		s.Weighted = append(s.Weighted, wkey+" "+strconv.Itoa(total))
		slot := 0
		for i, n := range names {
			for range weights[i] {
				s.Weighted = append(s.Weighted, wkey+"/"+strconv.Itoa(slot)+" "+mapValue(env, n, id+": spec.rules["+strconv.Itoa(ri)+"].backendRefs"))
				slot++
			}
		}
	}
	return "MULTI:" + wkey
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
