package render

import (
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/open2b/scriggo/native"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// The gateway library's per-route work in Go. Each route's share of the configuration
// (gatewayshare.go: attachment, matches, filters, backends) is computed on a state of
// its own and remembered while its inputs stay the same; the shares are merged in
// route order, in runs that are remembered merged, and the maps' lines sorted. The
// library keeps the Gateways, listeners and the output's layout. In the template each
// of these steps was a virtual-machine step (a reflect call or two) per field or line:
// most of a render at thousands of routes.
//
//	{% var order = gateway_route_order("http-routes", "HTTPRoute", "grpc-routes", "GRPCRoute") %}
//	{% var runs, err = gateway_route_runs(s, order, listenerPrint) %}
//	{% gateway_merge_runs(s, runs...) %}
//	{% var idx = gateway_index(s) %}                                     the maps' lines

// GatewayBackend is a backend entry of the gateway library: what its backend
// section writes. A typed record, not a map: the section reads its fields for every
// backend, and a map index in a template costs a reflect call and two allocations.
type GatewayBackend struct {
	Name       string // a config word (cfg_word)
	Directives []string
	H2         bool     // the route speaks HTTP/2 to it (a GRPCRoute)
	Hdr        []string // its header map lines
	// TLS is the BackendTLSPolicy it follows ({policy, ca, host, verify, cert,
	// certPem}), nil for plain servers.
	TLS map[string]any
	// servers are its Service port's servers as the route's share read them, with
	// the reads, which gateway_servers records in the fragment that writes them
	// (nil: it has none).
	servers *readServers
}

// GatewayState is everything one render of the gateway library computes about
// Gateways and routes (GwState in the library's docs), filled in order: listeners,
// then each route's share (a GatewayState of its own, merged with gateway_merge),
// then the frontends' rules.
type GatewayState struct {
	// Problem is the first problem found: the render fails with it.
	Problem string
	// Experimental and Only are extraContext.experimentalChannel and .gateway.
	Experimental bool
	Only         string
	// BasePorts are the ports the base library binds (port → its frontend); Classes
	// our GatewayClasses.
	BasePorts map[string]string
	Classes   map[string]bool
	// Notes are comment lines for haproxy.cfg.
	Notes []string
	// Frontends in order; listener id "<ns>/<gw>/<listener>" → its frontend,
	// prefix, hostname, allowedRoutes...; a Gateway's listener ids.
	Frontends     []map[string]any
	FrontendOf    map[string]map[string]any
	Listeners     map[string]map[string]any
	ListenersOfGw map[string][]string
	PortOwner     map[string]string
	SeenHost      map[string]bool
	// Hosts are host.map keys. Exact, PrefixExact, PrefixSorted and Regex hold
	// "<key>\x00<line>": the first share with a key (Seen) wins it. PrefixSorted's
	// lines start with a 7-character sort key; PlainPrefixes pairs each with its
	// {host key, path}.
	Hosts                                                          map[string]bool
	Seen                                                           map[string]bool
	Exact, PrefixExact, PrefixSorted, Regex, Weighted, HeaderLines []string
	// Conds are frontend rules of matches with conditions: "<fp> <group> <kind>" →
	// "<sort key>\x00<line>".
	Conds                      map[string][]string
	PlainPrefixes              [][2]string
	PrefixCondHosts            map[string]bool
	PrefixCondFrontends        map[string]bool
	CorsLines, CorsOriginLines []string
	// Backends are backend entries, the first of each name.
	Backends   []*GatewayBackend
	BackendIdx map[string]bool
	Need500    bool
	// merged holds the sorted lines of a state gateway_merge_runs made.
	merged *mergedRuns
	// weightedText is Weighted as map text while it holds weightedLines lines:
	// kept by a run, and made of the runs' by gateway_merge_runs.
	weightedText  string
	weightedLines int
	// backendHdr are the header map lines of Backends while they are hdrOf: read
	// once for a run, which is remembered between renders (reading them touches
	// every backend), and joined from the runs' by gateway_merge_runs.
	backendHdr []string
	hdrOf      []*GatewayBackend
}

func (e *Engine) gatewayBuiltins() native.Declarations {
	return native.Declarations{
		"GatewayState":              reflect.TypeOf(GatewayState{}),
		"GatewayBackend":            reflect.TypeOf(GatewayBackend{}),
		"gateway_merge":             gatewayMerge,
		"gateway_merge_runs":        e.gatewayMergeRuns,
		"gateway_index":             gatewayIndex,
		"gateway_route_order":       e.gatewayRouteOrder,
		"gateway_host_intersection": gatewayHostIntersection,
		"gateway_route_runs":        e.gatewayRouteRuns,
		"gateway_backend_runs":      e.gatewayBackendRuns,
		"gateway_granted": func(fromGroup, fromKind, fromNs, toGroup, toKind, toNs, toName string) bool {
			return e.st.here().gatewayGranted(fromGroup, fromKind, fromNs, toGroup, toKind, toNs, toName)
		},
		"gateway_allowed": func(s *GatewayState, lid, routeNs, routeKind string) bool {
			return e.st.here().gatewayAllowed(s, lid, routeNs, routeKind)
		},
		"gateway_namespace_labels": func(ns string) map[string]string { return e.st.here().gatewayNamespaceLabels(ns) },
		"labels_selected":          labelsSelected,
	}
}

// gatewayHostIntersection is a listener's hostname ∩ a route's hostname, the narrower
// of the two: "" when they do not intersect; an empty listener hostname takes every
// host. A wildcard "*.suffix" covers every host under that suffix, at any depth.
func gatewayHostIntersection(listener, route string) string {
	if listener == "" || hostCovers(listener, route) {
		return route
	}
	if hostCovers(route, listener) {
		return listener
	}
	return ""
}

// hostCovers reports whether hostname pattern p covers h, an exact host or a
// narrower wildcard.
func hostCovers(p, h string) bool {
	return p == h || strings.HasPrefix(p, "*.") && strings.HasSuffix(h, p[1:])
}

// gatewayRouteOrder is gateway_route_order(store, kind, store, kind...): the routes
// in the named stores (one store per route kind) with metadata and a spec, oldest
// first (creationTimestamp, then namespace/name, then kind), as {kind, namespace,
// name}. The lists are read as a template's List() is.
func (e *Engine) gatewayRouteOrder(storeKinds ...string) [][]string {
	stores := make([]*snapshot.Store, 0, len(storeKinds)/2)
	for i := 0; i+1 < len(storeKinds); i += 2 {
		e.st.list(storeKinds[i]) // the template reads the lists
		stores = append(stores, e.st.snapshot.Stores[storeKinds[i]])
	}
	return e.st.kept.order.update(strings.Join(storeKinds, " "), stores, storeKinds)
}

// libraryCaches are what the libraries' helpers keep between the renders of one
// extraContext (see renderState.kept; a Fresh render starts from none).
type libraryCaches struct {
	order     routeOrder
	runs      map[string]*mergedRuns // by Gateway fleet (extraContext.gateway)
	ingress   ingressRuns
	keyRuns   keyRunsMemo
	routeRuns routeRunsMemo
}

// routeOrder is the last gateway_route_order's answer. Its stores are immutable, so
// the next render re-sorts only the routes that changed between its stores and the
// new ones, and an unchanged order is the same slice (runs of it compare by
// pointer). An order given is never modified (earlier renders' runs hold parts of
// it): routes added after every other are appended past its end, in the room of
// out's array that no order given covers (orders are given without that room).
type routeOrder struct {
	kinds   string
	stores  []*snapshot.Store
	entries []routeOrderEntry // sorted by key
	out     [][]string
	// covered is how much of out's array the orders given cover: more than out
	// when the newest routes went (out was cut, not copied).
	covered int
}

type routeOrderEntry struct {
	key  string // creationTimestamp, namespace/name, kind
	item []string
}

func (a routeOrderEntry) compare(b routeOrderEntry) int { return strings.Compare(a.key, b.key) }

func routeEntry(o snapshot.Object, kind string) (routeOrderEntry, bool) {
	if kind == "HTTPRoute" { // (its native form has them at hand)
		r := formOf(o, formHTTPRoute, httpRouteForm)
		if r == nil {
			return routeOrderEntry{}, false
		}
		return r.order, true
	}
	meta, _ := o.Raw["metadata"].(map[string]any)
	if _, hasSpec := o.Raw["spec"].(map[string]any); meta == nil || !hasSpec {
		return routeOrderEntry{}, false
	}
	ns, name := rawString(meta["namespace"]), rawString(meta["name"])
	return routeOrderEntry{key: rawString(meta["creationTimestamp"]) + " " + ns + "/" + name + " " + kind,
		item: []string{kind, ns, name}}, true
}

func (r *routeOrder) update(kinds string, stores []*snapshot.Store, storeKinds []string) [][]string {
	if r.kinds != kinds || len(r.stores) != len(stores) {
		*r = routeOrder{kinds: kinds, stores: make([]*snapshot.Store, len(stores))}
	}
	var removed map[string]bool
	var added []routeOrderEntry
	for i, now := range stores {
		kind := storeKinds[2*i+1]
		gone, came := storeDiff(r.stores[i], now)
		for _, o := range gone {
			if en, ok := routeEntry(o, kind); ok {
				if removed == nil {
					removed = map[string]bool{}
				}
				removed[en.key] = true
			}
		}
		for _, o := range came {
			if en, ok := routeEntry(o, kind); ok {
				added = append(added, en)
			}
		}
		r.stores[i] = now
	}
	// A route changed in place keeps its key, and its entry (the key names it): the
	// order stands, without a pass over every entry.
	kept := added[:0]
	for _, en := range added {
		if removed[en.key] {
			delete(removed, en.key)
			continue
		}
		kept = append(kept, en)
	}
	added = kept
	if r.out != nil && len(removed) == 0 && len(added) == 0 {
		return r.given()
	}
	if r.out == nil || len(removed)+len(added) > len(r.entries)/8 { // many: sort once
		r.entries = slices.DeleteFunc(r.entries, func(en routeOrderEntry) bool { return removed[en.key] })
		r.entries = append(r.entries, added...)
		slices.SortFunc(r.entries, routeOrderEntry.compare)
		r.out, r.covered = make([][]string, len(r.entries)), 0
		for i, en := range r.entries {
			r.out[i] = en.item
		}
		return r.given()
	}
	// The newest routes gone: the order is cut short, its array kept as the orders
	// given hold it.
	if len(added) == 0 && r.newest(removed) {
		n := len(r.entries) - len(removed)
		r.entries, r.out = r.entries[:n], r.out[:n]
		return r.given()
	}
	// Routes only added after every other (new routes are the newest): appended
	// after the order's items, which stay as they were, where no order given covers
	// the array or it holds those routes already (the newest gone and back).
	slices.SortFunc(added, routeOrderEntry.compare)
	if len(removed) == 0 && (len(r.entries) == 0 || added[0].key > r.entries[len(r.entries)-1].key) && r.appendable(added) {
		for _, en := range added {
			if len(r.out) < r.covered {
				r.entries, r.out = append(r.entries, en), r.out[:len(r.out)+1]
			} else {
				r.entries, r.out = append(r.entries, en), append(r.out, en.item)
			}
		}
		return r.given()
	}
	// A few: the entries edited in place, the order (which earlier renders' runs
	// still hold) copied and edited alike, with room for routes added next.
	out := make([][]string, len(r.out), len(r.out)+len(added)+len(r.out)/8)
	copy(out, r.out)
	for key := range removed {
		if at, ok := r.find(key); ok {
			r.entries, out = slices.Delete(r.entries, at, at+1), slices.Delete(out, at, at+1)
		}
	}
	for _, en := range added {
		at, _ := r.find(en.key)
		r.entries, out = slices.Insert(r.entries, at, en), slices.Insert(out, at, en.item)
	}
	r.out, r.covered = out, 0
	return r.given()
}

// given is the order as update gives it: without the room past its end, so that
// nothing appended to it writes there.
func (r *routeOrder) given() [][]string {
	r.covered = max(r.covered, len(r.out))
	return r.out[:len(r.out):len(r.out)]
}

// newest reports whether the keys are those of the last entries.
func (r *routeOrder) newest(keys map[string]bool) bool {
	if len(keys) > len(r.entries) {
		return false
	}
	for _, en := range r.entries[len(r.entries)-len(keys):] {
		if !keys[en.key] {
			return false
		}
	}
	return true
}

// appendable reports whether added can go past the order's end without changing
// what an order given holds: where one covers out's array, it names those routes.
func (r *routeOrder) appendable(added []routeOrderEntry) bool {
	for i, en := range added {
		at := len(r.out) + i
		if at >= r.covered {
			return true
		}
		if !slices.Equal(r.out[:at+1][at], en.item) {
			return false
		}
	}
	return true
}

// gave reports whether order is the last order update gave: never modified, so
// that it can be kept without a copy.
func (r *routeOrder) gave(order [][]string) bool {
	return len(order) > 0 && len(order) == len(r.out) && &order[0] == &r.out[0]
}

// find is where the entry of key is in the order, or where it would go.
func (r *routeOrder) find(key string) (int, bool) {
	return sort.Find(len(r.entries), func(i int) int { return strings.Compare(key, r.entries[i].key) })
}

// storeDiff is the objects gone from and come into a store between two versions of
// it (nil: empty).
func storeDiff(old, now *snapshot.Store) (gone, came []snapshot.Object) {
	switch {
	case old == now:
		return nil, nil
	case now == nil:
		return listOf(old), nil
	case old == nil: // (the store's own list: read only)
		return nil, listOf(now)
	}
	return now.Diff(old)
}

// gatewayMerge is gateway_merge(s, shares...): adds the shares to s in order, after
// what s holds. The first share wins a map key and a backend name. It reads the
// shares only (they may be remembered ones), and merging merged shares is merging all
// of theirs, so runs of routes can be remembered merged too.
func gatewayMerge(s *GatewayState, shares ...*GatewayState) {
	s.prepare(shares)
	for _, r := range shares {
		s.add(r)
	}
}

// firstSeen marks key in s.Seen and reports whether it was not there: the first
// share (or match, or rule) with a key wins it.
func (s *GatewayState) firstSeen(key string) bool {
	if s.Seen[key] {
		return false
	}
	s.Seen[key] = true
	return true
}

// prepare makes s's sets, sized for what shares add.
func (s *GatewayState) prepare(shares []*GatewayState) {
	// Sized first: a render merges every route's lines, and growing the sets as it
	// went was most of the merge's cost.
	var keys, hosts, prefixes int
	for _, r := range shares {
		keys += len(r.Exact) + len(r.PrefixExact) + len(r.PrefixSorted) + len(r.Regex)
		hosts, prefixes = hosts+len(r.Hosts), prefixes+len(r.PlainPrefixes)
	}
	s.PlainPrefixes = slices.Grow(s.PlainPrefixes, prefixes)
	if len(s.Seen) == 0 {
		s.Seen = make(map[string]bool, keys)
	}
	if len(s.Hosts) == 0 {
		s.Hosts = make(map[string]bool, hosts)
	}
	s.prepareUnkeyed(shares)
}

// prepareUnkeyed makes room for what addUnkeyed adds of shares.
func (s *GatewayState) prepareUnkeyed(shares []*GatewayState) {
	if backends := s.growFor(shares, true); len(s.BackendIdx) == 0 {
		s.BackendIdx = make(map[string]bool, backends)
	}
}

// growFor makes room in s's lists (its backends too, or not) for what shares bring
// (appending to lists grown as they go copied each several times), makes the sets
// addLines writes and returns how many backends shares bring.
func (s *GatewayState) growFor(shares []*GatewayState, withBackends bool) (backends int) {
	var notes, regex, weighted, cors, origins int
	for _, r := range shares {
		backends, notes, regex = backends+len(r.Backends), notes+len(r.Notes), regex+len(r.Regex)
		weighted, cors, origins = weighted+len(r.Weighted), cors+len(r.CorsLines), origins+len(r.CorsOriginLines)
	}
	if withBackends {
		s.Backends = slices.Grow(s.Backends, backends)
	}
	s.Notes, s.Regex = slices.Grow(s.Notes, notes), slices.Grow(s.Regex, regex)
	s.Weighted, s.CorsLines = slices.Grow(s.Weighted, weighted), slices.Grow(s.CorsLines, cors)
	s.CorsOriginLines = slices.Grow(s.CorsOriginLines, origins)
	s.condMaps()
	return backends
}

func (s *GatewayState) add(r *GatewayState) {
	for h := range r.Hosts {
		s.Hosts[h] = true
	}
	s.Exact = mergeKeyed(s.Seen, s.Exact, r.Exact)
	s.PrefixExact = mergeKeyed(s.Seen, s.PrefixExact, r.PrefixExact)
	for i, l := range r.PrefixSorted {
		if s.firstSeen(lineKey(l)) {
			s.PrefixSorted = append(s.PrefixSorted, l)
			s.PlainPrefixes = append(s.PlainPrefixes, r.PlainPrefixes[i])
		}
	}
	s.Regex = mergeKeyed(s.Seen, s.Regex, r.Regex)
	s.HeaderLines = append(s.HeaderLines, r.HeaderLines...)
	s.addUnkeyed(r)
}

// addDistinct is addUnkeyed of every run when no backend is in two runs (nor in s):
// each run brings all its backends, so the lists are appended whole, without the
// set of backend names (BackendIdx stays unfilled); the backends are the runs'
// backends in a row, from backends (kept between renders).
func (s *GatewayState) addDistinct(runs []*GatewayState, backends *joined[*GatewayState, *GatewayBackend]) {
	s.growFor(runs, false)
	s.Backends = backends.of(runs, samePointer, func(r *GatewayState) []*GatewayBackend { return r.Backends })
	var hdr []string
	for _, r := range runs {
		s.Regex = append(s.Regex, r.Regex...)
		s.Notes = append(s.Notes, r.Notes...)
		s.addLines(r)
		hdr = append(hdr, r.backendHeaderLines()...)
	}
	s.backendHdr, s.hdrOf = hdr, s.Backends
	s.addPlainPrefixes(runs)
}

// addPlainPrefixes appends the runs' PlainPrefixes, which gateway_index reads only
// when a host has prefix rules with conditions (most configs have none): a list as
// long as the routes' prefixes is not copied for every render otherwise.
func (s *GatewayState) addPlainPrefixes(runs []*GatewayState) {
	if len(s.PrefixCondHosts) == 0 {
		return
	}
	n := 0
	for _, r := range runs {
		n += len(r.PlainPrefixes)
	}
	s.PlainPrefixes = slices.Grow(s.PlainPrefixes, n)
	for _, r := range runs {
		s.PlainPrefixes = append(s.PlainPrefixes, r.PlainPrefixes...)
	}
}

// backendHeaderLines are the header map lines of s's backends, in order (see
// backendHdr).
func (s *GatewayState) backendHeaderLines() []string {
	if len(s.hdrOf) != len(s.Backends) || len(s.hdrOf) > 0 && &s.hdrOf[0] != &s.Backends[0] {
		var hdr []string
		for _, b := range s.Backends {
			hdr = append(hdr, b.Hdr...)
		}
		s.backendHdr, s.hdrOf = hdr, s.Backends
	}
	return s.backendHdr
}

// condMaps makes the maps of frontend rules with conditions: a route's share has
// them only when it has such a match (most routes have none).
func (s *GatewayState) condMaps() {
	if s.Conds == nil {
		s.Conds = map[string][]string{}
	}
	if s.PrefixCondHosts == nil {
		s.PrefixCondHosts = map[string]bool{}
	}
	if s.PrefixCondFrontends == nil {
		s.PrefixCondFrontends = map[string]bool{}
	}
}

// addUnkeyed adds what add does but the hosts and the lines gateway_index sorts
// (keyed lines, header lines).
func (s *GatewayState) addUnkeyed(r *GatewayState) {
	for _, b := range r.Backends {
		if !s.BackendIdx[b.Name] {
			s.BackendIdx[b.Name] = true
			s.Backends = append(s.Backends, b)
		}
	}
	s.Notes = append(s.Notes, r.Notes...)
	s.addLines(r)
}

// addLines is addUnkeyed after the backends and notes.
func (s *GatewayState) addLines(r *GatewayState) {
	s.Weighted = append(s.Weighted, r.Weighted...)
	s.CorsLines = append(s.CorsLines, r.CorsLines...)
	s.CorsOriginLines = append(s.CorsOriginLines, r.CorsOriginLines...)
	for k, v := range r.Conds {
		s.Conds[k] = append(s.Conds[k], v...)
	}
	for k := range r.PrefixCondHosts {
		s.PrefixCondHosts[k] = true
	}
	for k := range r.PrefixCondFrontends {
		s.PrefixCondFrontends[k] = true
	}
	s.Need500 = s.Need500 || r.Need500
}

// mergeKeyed appends the "<key>\x00<line>" entries of add whose key is not seen yet.
func mergeKeyed(seen map[string]bool, to, add []string) []string {
	for _, l := range add {
		if k := lineKey(l); !seen[k] {
			seen[k] = true
			to = append(to, l)
		}
	}
	return to
}

func lineKey(l string) string {
	k, _, _ := strings.Cut(l, "\x00")
	return k
}

// lineOf is the line of a "<key>\x00<line>" entry.
func lineOf(l string) string {
	_, line, _ := strings.Cut(l, "\x00")
	return line
}

func linesOf(entries []string) []string {
	out := make([]string, len(entries))
	for i, l := range entries {
		out[i] = lineOf(l)
	}
	return out
}

// hostLine is host key h's host.map line. The frontends take the key they looked
// up when it is there (-m found), so the value is one byte (the key repeated made
// host.map twice the size: 4 MB at 50,000 routes, written again for each route
// added or taken out).
func hostLine(h string) string { return h + " 1" }

// gatewayIndex is the maps' lines and the notes of a merged state: the part of the
// library's index that grows with the routes. The maps whose lines gateway_merge_runs
// keeps sorted between renders are given as their text only (mapText): a list of
// their lines would be copied for every render.
func gatewayIndex(s *GatewayState) map[string]any {
	notes := slices.Clone(s.Notes)
	backendHeaders := sortStrings(s.backendHeaderLines())
	var texts [5]bundle.Text
	if m := s.merged; m != nil {
		for i := range texts {
			texts[i] = m.lists[i].text
		}
		if len(backendHeaders) > 0 {
			texts[listHeaders] = m.headers.of(texts[listHeaders], backendHeaders, func() []string {
				return mergeSorted(m.lists[listHeaders].lines(), backendHeaders)
			})
		}
	} else {
		hosts := make([]string, 0, len(s.Hosts))
		for h := range s.Hosts {
			hosts = append(hosts, hostLine(h))
		}
		sort.Strings(hosts) // "h 1" sorts as h: a host holds no blank
		lists := [5][]string{listHosts: hosts, listExact: sortStrings(linesOf(s.Exact)),
			listPrefixExact: sortStrings(linesOf(s.PrefixExact)), listPrefix: sortStrings(linesOf(s.PrefixSorted)),
			listHeaders: mergeSorted(sortStrings(s.HeaderLines), backendHeaders)}
		for i, l := range lists {
			texts[i] = bundle.TextOf(linesText(l, listText[i]))
		}
	}
	weighted := s.weightedText
	if s.weightedLines != len(s.Weighted) {
		weighted = linesText(s.Weighted, textFrom(0))
	}
	mapText := map[string]bundle.Text{
		"hosts":       texts[listHosts],
		"exact":       texts[listExact],
		"prefixExact": texts[listPrefixExact],
		"prefix":      texts[listPrefix],
		"headerLines": texts[listHeaders],
		"weighted":    bundle.TextOf(weighted),
	}
	// lengths of path-only prefixes, for hosts that also have prefix rules with
	// conditions: such a rule must lose to a longer path-only prefix
	var lenExact, lenPrefix []string
	for _, pp := range s.PlainPrefixes {
		if len(s.PrefixCondHosts) == 0 {
			break
		}
		if !s.PrefixCondHosts[pp[0]] {
			continue
		}
		if pp[1] != "" {
			lenExact = append(lenExact, pp[0]+pp[1]+" "+strconv.Itoa(len(pp[1])))
		}
		lenPrefix = append(lenPrefix, strconv.Itoa(199999-len(pp[0]+pp[1]+"/"))+" "+pp[0]+pp[1]+"/ "+strconv.Itoa(len(pp[1])))
	}
	sort.Strings(lenPrefix)
	for i, l := range lenPrefix {
		lenPrefix[i] = l[7:]
	}
	return map[string]any{
		"notes":       notes,
		"regex":       linesOf(s.Regex),
		"weighted":    s.Weighted,
		"mapText":     mapText,
		"backends":    s.Backends,
		"lenExact":    sortStrings(lenExact),
		"lenPrefix":   lenPrefix,
		"need500":     s.Need500,
		"cors":        sortStrings(s.CorsLines),
		"corsOrigins": s.CorsOriginLines,
	}
}
