package render

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/open2b/scriggo/native"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// routeShare is a route's share of the configuration (or a run's merged shares), or
// the render's error.
type routeShare struct {
	err   string
	state *GatewayState
}

// gatewayRouteShare is a route's share of the configuration, computed on r, a
// GatewayState of its own that has the listeners of s and nothing of other routes:
// made, or the last route's share emptied (its sets and lists kept, cleared: the
// run merged what it held). Shares are merged in route order (GatewayState.add).
func (rd reader) gatewayRouteShare(env native.Env, s, r *GatewayState, route *gwRoute) (*GatewayState, string) {
	if r == nil {
		r = &GatewayState{Hosts: map[string]bool{}, Seen: map[string]bool{}, BackendIdx: map[string]bool{}} // (condMaps when needed)
	} else {
		clear(r.Hosts)
		clear(r.Seen)
		clear(r.BackendIdx)
		clear(r.Conds)
		clear(r.PrefixCondHosts)
		clear(r.PrefixCondFrontends)
		*r = GatewayState{Hosts: r.Hosts, Seen: r.Seen, BackendIdx: r.BackendIdx,
			Conds: r.Conds, PrefixCondHosts: r.PrefixCondHosts, PrefixCondFrontends: r.PrefixCondFrontends,
			Exact: r.Exact[:0], PrefixExact: r.PrefixExact[:0], PrefixSorted: r.PrefixSorted[:0], Regex: r.Regex[:0],
			Weighted: r.Weighted[:0], HeaderLines: r.HeaderLines[:0], PlainPrefixes: r.PlainPrefixes[:0],
			CorsLines: r.CorsLines[:0], CorsOriginLines: r.CorsOriginLines[:0], Backends: r.Backends[:0], Notes: r.Notes[:0]}
	}
	r.Experimental, r.Only, r.BasePorts, r.Classes = s.Experimental, s.Only, s.BasePorts, s.Classes
	r.Frontends, r.FrontendOf, r.Listeners, r.ListenersOfGw = s.Frontends, s.FrontendOf, s.Listeners, s.ListenersOfGw
	r.PortOwner, r.SeenHost = s.PortOwner, s.SeenHost
	err := rd.gatewayRoute(env, r, route)
	if err == "" {
		err = r.Problem
	}
	return r, err
}

// gatewayRoute adds a route to s: its attachment, then every match of every rule as
// map lines (a path only) or frontend rules (with conditions). It returns the
// render's error, or "".
func (rd reader) gatewayRoute(env native.Env, s *GatewayState, route *gwRoute) string {
	id, rns, name := route.id, route.namespace, route.name
	// the names are part of map keys and of str() arguments in frontend rules
	if !isDNSLabel(rns) || !isDNSSubdomain(name) {
		return route.kind + " " + toJSON(rns+"/"+name) + ": metadata: the namespace is not a DNS label or the name not a DNS subdomain"
	}
	var room [4][3]string
	hostKeys, err := rd.gatewayAttach(env, s, route, room[:0])
	if err != "" || len(hostKeys) == 0 {
		return err
	}
	for ri := range route.rules {
		rule := &route.rules[ri]
		value := ""
		for mi := range rule.matches {
			m := &rule.matches[mi]
			ptype, path, pfield := m.ptype, m.pvalue, m.pfield
			switch ptype {
			case "RegularExpression":
				if p := regexProblem(path); p != "" {
					return id + ": " + pfield + ": regular expression " + toJSON(path) + " " + p
				}
				regexMatch(path, "/") // RE2 must take it too: a compile error fails the render
			case "Exact", "PathPrefix":
				if !strings.HasPrefix(path, "/") || !plainPath(path) {
					return id + ": " + pfield + ": path " + toJSON(path) + " must start with / and hold no whitespace or '#'"
				}
			default:
				return id + ": " + pfield + ": path type " + toJSON(ptype) + " is not supported"
			}
			if value == "" {
				value = rd.gatewayRuleValue(env, s, route, ri, rule)
				if s.Problem != "" {
					return s.Problem
				}
				if err := config.CheckMapValue(value); err != nil { // (the field's name made only when needed)
					value = refuse(env, id+": spec.rules["+strconv.Itoa(ri)+"].backendRefs", err)
				}
			}
			base := strings.TrimRight(path, "/")
			if len(m.headers) == 0 && len(m.query) == 0 && m.method == "" {
				gatewayPlainMatch(env, s, id, hostKeys, ptype, path, base, pfield, value)
				continue
			}
			if err := gatewayMatchConds(env, s, route, ri, mi, m, hostKeys, value, ptype, path, pfield, base); err != "" {
				return err
			}
		}
	}
	return ""
}

// gatewayMatchConds adds a match with conditions (method, headers, query
// parameters) as frontend rules in s.Conds, ordered by the spec's precedence. It
// returns the render's error, or "".
func gatewayMatchConds(env native.Env, s *GatewayState, route *gwRoute, ri, mi int, m *gwMatch,
	hostKeys [][3]string, value, ptype, path, pfield, base string) string {
	s.condMaps()
	id, mfield := route.id, m.field
	headers, query := m.headers, m.query
	// structural: ACL conditions, ordered by the spec's precedence
	var acl []string
	switch {
	case ptype == "Exact":
		acl = append(acl, "{ path -m str "+cfgWord(env, path, id+": "+pfield)+" }")
	case ptype == "PathPrefix" && base != "":
		acl = append(acl, "{ path -m reg "+cfgWord(env, "^"+regexp.QuoteMeta(base)+"(/.*)?$", id+": "+pfield)+" }")
	case ptype == "RegularExpression":
		acl = append(acl, "{ path -m reg "+cfgWord(env, "^(?:"+trimRegexAnchors(path)+")$", id+": "+pfield)+" }")
	}
	method := m.method
	if method != "" {
		if !regexMatch(`^[A-Z]+$`, method) {
			return id + ": " + mfield + ".method: " + toJSON(method) + " is not an HTTP method"
		}
		acl = append(acl, "{ method "+method+" }")
	}
	for hi, h := range headers {
		hf := mfield + ".headers[" + strconv.Itoa(hi) + "]"
		if !isHeaderName(h[1]) {
			return id + ": " + hf + ".name: " + toJSON(h[1]) + " is not a valid header name"
		}
		if p := valueProblem(h[2]); p != "" {
			return id + ": " + hf + ".value: " + p
		}
		fetch := "req.hdr(" + fetchArg(env, h[1], id+": "+hf+".name") + ")"
		switch {
		case h[0] == "RegularExpression":
			if p := regexProblem(h[2]); p != "" {
				return id + ": " + hf + ".value: regular expression " + toJSON(h[2]) + " " + p
			}
			acl = append(acl, "{ "+fetch+" -m reg "+cfgWord(env, h[2], id+": "+hf+".value")+" }")
		case h[2] == "":
			acl = append(acl, "{ "+fetch+" -m len 0 }")
		default:
			acl = append(acl, "{ "+fetch+" -m str "+cfgWord(env, h[2], id+": "+hf+".value")+" }")
		}
	}
	for qi, q := range query {
		qf := mfield + ".queryParams[" + strconv.Itoa(qi) + "]"
		if !regexMatch(`^[A-Za-z0-9_.~!*+-]+$`, q[1]) {
			return id + ": " + qf + ".name: " + toJSON(q[1]) + " is not a supported query parameter name"
		}
		if p := valueProblem(q[2]); p != "" {
			return id + ": " + qf + ".value: " + p
		}
		fetch := "url_param(" + fetchArg(env, q[1], id+": "+qf+".name") + ")"
		if q[0] == "RegularExpression" {
			if p := regexProblem(q[2]); p != "" {
				return id + ": " + qf + ".value: regular expression " + toJSON(q[2]) + " " + p
			}
			acl = append(acl, "{ "+fetch+" -m reg "+cfgWord(env, q[2], id+": "+qf+".value")+" }")
		} else {
			acl = append(acl, "{ "+fetch+" -m str "+cfgWord(env, q[2], id+": "+qf+".value")+" }")
		}
	}
	// HAProxy reads at most 64 words per line. A match with more than four header and
	// query conditions names each condition in an ACL line of its own ("acl <name>
	// <condition>") and its rule lists the names: at most 16 + 16 + path + method
	// names, within the limit with the host and length conditions.
	aclLines := ""
	if len(headers)+len(query) > 4 {
		aclBase := "gwm_" + sha256Hex(id + " " + mfield)[:12]
		names := make([]string, len(acl))
		for ai, a := range acl {
			names[ai] = aclBase + "_" + strconv.Itoa(ai)
			aclLines += "acl " + names[ai] + " " + strings.TrimSuffix(strings.TrimPrefix(a, "{ "), " }") + "\n"
		}
		acl = names
	}
	// precedence: exact path, longer prefix, (regex last), method, more headers, more
	// query params, older route, namespace/name, rule, match
	kind, plen := "1", 0
	switch ptype {
	case "Exact":
		kind = "0"
	case "RegularExpression":
		kind = "2"
	default:
		plen = len(base)
	}
	hasMethod := "1"
	if method != "" {
		hasMethod = "0"
	}
	sortKey := fmt.Sprintf("%s%05d%s%02d%02d %s %s/%s %04d%04d", kind, 99999-plen, hasMethod, 99-len(headers), 99-len(query),
		route.created, route.namespace, route.name, ri, mi)
	for _, fphk := range hostKeys {
		fe, hk, lp := fphk[0], fphk[1], fphk[2]
		group := "host"
		if strings.HasSuffix(hk, "/*") {
			group = "any"
		}
		// catch-all rules run after the host's own lookups, for every host of their
		// listener
		hostACL := "{ var(txn.host_match) -m str " + cfgWord(env, hk) + " } "
		if group == "any" {
			hostACL = "{ var(txn.gwl) -m str " + cfgWord(env, lp) + " } "
		}
		// a prefix rule loses to a path-only prefix that is longer (txn.plen)
		lenACL := ""
		if kind == "1" {
			lenACL = " { var(txn.plen) -m int le " + strconv.Itoa(plen) + " }"
			s.PrefixCondHosts[hk] = true
			s.PrefixCondFrontends[fe] = true
		}
		// (the ACL lines come first: a name must be defined before a rule uses it;
		// defining one again with the same condition changes nothing)
		line := aclLines + "http-request set-var(txn.route) str(" + value + ") if !{ var(txn.route) -m found } " + hostACL +
			strings.Join(acl, " ") + lenACL + "  # " + comment(id+" "+mfield)
		k := fe + " " + group + " " + kind
		s.Conds[k] = append(s.Conds[k], sortKey+"\x00"+line)
		// wildcard hosts get a second chance when an exact host had no route
		if strings.HasPrefix(hk[len(lp):], "*.") {
			wline := strings.ReplaceAll(line, "{ var(txn.host_match) -m str "+cfgWord(env, hk)+" }",
				"{ var(txn.gwwild) -m found } { var(txn.host_wild) -m str "+cfgWord(env, hk)+" }")
			s.Conds[fe+" wild "+kind] = append(s.Conds[fe+" wild "+kind], sortKey+"\x00"+wline)
		}
	}
	return ""
}

// regexProblem is a structural check of a regular expression, so that a bad one fails
// the render with the route's name instead of a compiler panic: balanced groups and
// classes, quantifiers after something, only (?: among group extensions (RE2 and PCRE
// agree on the rest), no whitespace or '#'. "" when acceptable.
func regexProblem(re string) string {
	if re == "" {
		return "is empty"
	}
	if regexMatch(`[\s#]`, re) {
		return "holds whitespace or '#'"
	}
	depth := 0
	canRepeat, afterRepeat := false, false
	for i := 0; i < len(re); i++ {
		c := re[i]
		switch {
		case c == '\\':
			if i+1 >= len(re) {
				return "ends with a lone backslash"
			}
			i++
			canRepeat, afterRepeat = true, false
		case c == '[':
			j := i + 1
			if j < len(re) && re[j] == '^' {
				j++
			}
			if j < len(re) && re[j] == ']' {
				j++
			}
			for ; j < len(re) && re[j] != ']'; j++ {
				if re[j] == '\\' {
					j++
				}
			}
			if j >= len(re) {
				return "has an unclosed '['"
			}
			i = j
			canRepeat, afterRepeat = true, false
		case c == '{' && !repetitionCount.MatchString(re[i:]):
			canRepeat, afterRepeat = true, false
		case c == '*' || c == '+' || c == '?' || c == '{':
			if c == '{' {
				i += strings.IndexByte(re[i:], '}')
			}
			if c == '?' && afterRepeat {
				afterRepeat = false
				continue
			}
			if !canRepeat {
				return "has a repetition operator with nothing to repeat"
			}
			canRepeat, afterRepeat = false, true
		case c == '(':
			afterRepeat = false
			if i+1 < len(re) && re[i+1] == '?' {
				if i+2 >= len(re) || re[i+2] != ':' {
					return "uses a group construct other than (?:"
				}
				i += 2
			}
			depth++
			canRepeat = false
		case c == ')':
			afterRepeat = false
			if depth--; depth < 0 {
				return "has an unbalanced ')'"
			}
			canRepeat = true
		default:
			afterRepeat = false
			canRepeat = c != '|' && c != '^' && c != '$'
		}
	}
	if depth != 0 {
		return "has an unbalanced '('"
	}
	return ""
}

// repetitionCount is a {n} or {n,m} quantifier at the start of a string.
var repetitionCount = regexp.MustCompile(`^\{[0-9]+(,[0-9]*)?\}`)

// gatewayRouteRuns is gateway_route_runs(s, order, listeners): every route of order
// (gateway_route_order) as shares merged in runs of 64, each run remembered (cached)
// while what it read and the listeners (their print) stay the same, so that after
// one route changed the render reuses the other runs whole and computes its own
// again (a memo per route cost a full render more than 64 routes cost a change). The
// runs to compute are computed apart, on every core (apart.go). It returns the runs
// in order, or the render's error (the first route's that fails).
func (e *Engine) gatewayRouteRuns(env native.Env, s *GatewayState, order [][]string, listeners string) ([]*GatewayState, string) {
	const runSize = 64
	type run struct {
		key    string
		inputs []any      // the routes' keys and the listeners
		memo   *valueMemo // an earlier render's, standing
		made   int        // its index in made; -1: none
	}
	starts := e.routeRuns(order, runSize)
	names := e.routeRunNames("gw routes from ")
	runs := make([]run, 0, len(starts))
	var toMake []int
	for b := 0; b+1 < len(starts); b++ {
		keys := order[starts[b]:starts[b+1]]
		r := run{key: names[b], inputs: []any{keys, listeners}, made: -1}
		if r.memo = e.standing(r.key, r.inputs); r.memo == nil {
			r.made = len(toMake)
			toMake = append(toMake, len(runs))
		}
		runs = append(runs, r)
	}
	made := computeApart(e.st, len(toMake), func(j int, rd reader) *routeShare {
		return rd.gatewayRun(env, s, runs[toMake[j]].inputs[0].([][]string))
	})
	out := make([]*GatewayState, 0, len(runs))
	for _, r := range runs {
		var share *routeShare
		switch {
		case r.memo != nil && e.take(r.key, r.inputs, r.memo):
			share = r.memo.value.(*routeShare)
		case r.memo != nil: // (it stood a moment ago: only a replay can refuse it)
			r.made = len(made)
			made = append(made, computeApart(e.st, 1, func(_ int, rd reader) *routeShare {
				return rd.gatewayRun(env, s, r.inputs[0].([][]string))
			})...)
		}
		if r.made >= 0 {
			share = made[r.made].take()
			if e.st.rec != nil {
				e.memoize(r.key, r.inputs, share, made[r.made].deps)
			}
		}
		if share.err != "" {
			return nil, share.err
		}
		out = append(out, share.state)
	}
	return out, ""
}

// gatewayRun merges the shares of a run of routes, or is the first route's error.
// Each route's share is added to the run's as soon as it is made (as gatewayMerge
// would add them all), so one share's sets and lists serve every route of the run.
func (rd reader) gatewayRun(env native.Env, s *GatewayState, run [][]string) *routeShare {
	n := len(run)
	part := &GatewayState{Seen: make(map[string]bool, 2*n), Hosts: make(map[string]bool, n), BackendIdx: make(map[string]bool, n),
		Exact: make([]string, 0, n), PrefixSorted: make([]string, 0, n), PlainPrefixes: make([][2]string, 0, n),
		Backends: make([]*GatewayBackend, 0, n)}
	part.condMaps()
	var share *GatewayState
	for _, key := range run {
		store, kind, native := gatewayHTTPRoutesStore, formHTTPRoute, httpRouteForm
		if key[0] == "GRPCRoute" {
			store, kind, native = gatewayGRPCRoutesStore, formGRPCRoute, grpcRouteForm
		}
		route := rd.nativeRoute(store, kind, key[1], key[2], native)
		if route == nil {
			continue
		}
		if route.err != "" {
			return &routeShare{err: route.err}
		}
		var err string
		if share, err = rd.gatewayRouteShare(env, s, share, route); err != "" {
			return &routeShare{err: err}
		}
		part.add(share)
	}
	return &routeShare{state: part}
}

// gatewayBackendRuns is gateway_backend_runs(backends, n): key_runs of the backends'
// names, the runs of about n backends the section renders as one unit (a backend
// added changes its own run; runs by position would all shift after it). The list
// is the one gateway_backend_servers names backends in.
func (e *Engine) gatewayBackendRuns(bs []*GatewayBackend, n int) []int {
	e.st.gatewayListed = bs
	return namedRuns(e, bs, func(b *GatewayBackend) string { return b.Name }, n)
}
