package render

import (
	"slices"
	"strconv"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// service_servers writes the server lines of a backend in Go: the ready endpoints of
// a Service port, read from the watched Service and EndpointSlice stores. In the
// template the loop over slices, endpoints and addresses cost a reflect call or more
// per step, about a quarter of a full render at scale.
//
//	{{ service_servers("services", "endpoints", ns, service, port, " check" + opts) }}
//
// port is the Service port's name or number. The Service is read by key from the
// first store (GetSingle), its EndpointSlices from the second, indexed by namespace
// and service name (Fetch); both reads are recorded like the templates' own. The
// answer is the backend's lines, newline-separated:
//
//   - "server srv_<address>_<port> <address>:<port><suffix>" per ready IP address
//     (an endpoint without conditions counts as ready, one whose conditions do not
//     say ready does not), each server once, in EndpointSlice order; the port is the
//     slice's port named like the Service port (the last one so named).
//   - "# haptic: <comment>" for an address that is not an IP address (an FQDN or a
//     malformed address never reaches a server line).
func (e *Engine) serviceServers(services, endpoints, ns, service, port, suffix string) string {
	st := e.st
	lines, ok := st.ahead.take(st, services, endpoints, ns, service, port)
	if !ok {
		lines = st.here().serverLines(services, endpoints, ns, service, port, "")
	}
	return lines.text(suffix)
}

// serverLines are a backend's server lines before service_servers writes them: nil
// when the Service has no such port.
type serverLines []serverLine

// serverLine is "srv_<address>_<port> <address>:<port>", or a comment line for an
// address that is not an IP address.
type serverLine struct {
	text    string
	comment bool
}

// serverLines reads the Service ns/service from the store services and its
// EndpointSlices from endpoints, and lists the server lines of its port port; ikey
// is the index key of both reads ("": made here).
func (rd reader) serverLines(services, endpoints, ns, service, port, ikey string) serverLines {
	keys := []string{ns, service}
	if ikey == "" {
		ikey = snapshot.IndexKey(keys) // (both stores are read by the same keys)
	}
	if rd.deps != nil && rd.deps.reads == nil {
		rd.deps.reads = make([]*read, 0, 2) // (a backend's unit reads the two)
	}
	spName, found := servicePortName(rd.getSingleKeyed(services, keys, ikey), port)
	if !found {
		return nil
	}
	return endpointLines(rd.fetchKeyed(endpoints, keys, ikey), ns, spName)
}

// endpointLines are the server lines of EndpointSlices eps of namespace ns on the
// port named spName.
func endpointLines(eps []snapshot.Object, ns, spName string) serverLines {
	out := make(serverLines, 0, 2) // (most backends have one or two servers)
	endpointServers(eps, spName, func(line string) {
		out = append(out, serverLine{text: line})
	}, func(slice snapshot.Object, addr string) {
		out = append(out, serverLine{text: "# haptic: " + comment("EndpointSlice "+ns+"/"+slice.Name+": address "+toJSON(addr)+" is not an IP address; skipped"), comment: true})
	})
	return out
}

// text is the lines newline-separated, each server line as "server <line><suffix>".
func (ls serverLines) text(suffix string) string {
	n := 0
	for _, l := range ls {
		n += len("server ") + len(l.text) + len(suffix) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i, l := range ls {
		if i > 0 {
			b.WriteByte('\n')
		}
		if l.comment {
			b.WriteString(l.text)
			continue
		}
		b.WriteString("server ")
		b.WriteString(l.text)
		b.WriteString(suffix)
	}
	return b.String()
}

// endpointServers walks the ready addresses of slices on the port named spName (the
// last one so named in each slice): server gets each server once, as "srv_<address>_<port>
// <address>:<port>", in slice order; bad gets each address that is not an IP address.
func endpointServers(eps []snapshot.Object, spName string, server func(line string), bad func(slice snapshot.Object, addr string)) {
	var seen serverSet
	for _, slice := range eps {
		f := formOf(slice, formEndpointSlice, endpointSliceForm)
		var port *slicePort
		for i := range f.ports {
			if f.ports[i].name == spName {
				port = &f.ports[i]
			}
		}
		if port == nil || port.number == 0 {
			continue
		}
		for i, addr := range f.addrs {
			if !f.ip[i] {
				bad(slice, addr)
				continue
			}
			if srv := port.servers[i]; seen.add(srv) {
				server(port.lines[i])
			}
		}
	}
}

// serverSet is a set of server names: a list while it is short (most backends have
// a few servers, and a scan costs less than a map), a map past that. The list is
// held in the set, which stays on its user's stack.
type serverSet struct {
	few  [16]string
	n    int
	many map[string]bool
}

// add adds name and reports whether it was new.
func (s *serverSet) add(name string) bool {
	if s.many != nil {
		if s.many[name] {
			return false
		}
		s.many[name] = true
		return true
	}
	if slices.Contains(s.few[:s.n], name) {
		return false
	}
	if s.n < len(s.few) {
		s.few[s.n] = name
		s.n++
		return true
	}
	s.many = make(map[string]bool, 2*len(s.few))
	for _, n := range s.few {
		s.many[n] = true
	}
	s.many[name] = true
	return true
}

// serverName is "srv_<addr>_<port>" with the address's '.' and ':' as '_', one
// allocation (a server per ready address of every backend).
func serverName(addr, port string) string {
	var b strings.Builder
	b.Grow(len("srv_") + len(addr) + 1 + len(port))
	b.WriteString("srv_")
	for i := 0; i < len(addr); i++ {
		c := addr[i]
		if c == '.' || c == ':' {
			c = '_'
		}
		b.WriteByte(c)
	}
	b.WriteByte('_')
	b.WriteString(port)
	return b.String()
}

// gateway_servers writes the server lines of a backend of the gateway library, as
// service_servers does (a server per ready IP address of its Service port, sorted;
// a comment for an address that is not one):
//
//	{{ gateway_servers(b, " check" + proto) }}
//
// The route's share that brought the backend read them (readServers) on its worker,
// apart from the share's own reads: the share, and the gateway index merged from the
// shares, do not depend on EndpointSlices, so a changed EndpointSlice renders the
// run of backends that writes its servers, not the index. Here the reads go to the
// fragment being rendered; where they no longer answer for this render's stores
// (that fragment renders again after an EndpointSlice changed) the lines are read
// again.
func (e *Engine) gatewayServers(b *GatewayBackend, suffix string) string {
	s := b.servers
	if s == nil {
		return ""
	}
	st := e.st
	if !s.current(st) {
		return gatewayServerLines(st.here(), s.ref).text(suffix)
	}
	if st.rec != nil {
		d := &st.rec.top().deps
		for _, r := range s.reads {
			d.addRead(r)
		}
	}
	return s.lines.text(suffix)
}

// gateway_backend_servers(suffix, i) is gateway_servers of backend i of the list the
// last gateway_backend_runs call of the render was given:
//
//	{% var bounds = gateway_backend_runs(bs, 128) %} ...
//	{% for j, b := range bs[i:stop] %} ... {{ gateway_backend_servers(" check" + proto, i+j) }}
//
// The same lines, in a call the template engine makes without reflect (as
// backend_servers): gateway_servers' reflect call per backend was 2 ms of the 9 ms
// haproxy.cfg takes at 5,000 HTTPRoutes.
func (e *Engine) gatewayBackendServers(suffix string, i int) string {
	bs := e.st.gatewayListed
	mustBeIn("gateway_backend_servers", "gateway_backend_runs", bs != nil, len(bs), i)
	return e.gatewayServers(bs[i], suffix)
}

// serviceRef is a Service port: its namespace, name and port name.
type serviceRef struct{ namespace, service, port string }

// readServers are a backend's Service port, its server lines and the reads that
// found them.
type readServers struct {
	ref   serviceRef
	lines serverLines
	reads []*read
	gen   uint64 // the render that read them
}

// readServers reads the gateway servers of ref with reads recorded apart, for
// gateway_servers.
func (rd reader) readServers(ref serviceRef) *readServers {
	var d deps
	var recent recentReads
	lines := gatewayServerLines(reader{st: rd.st, deps: &d, recent: &recent}, ref)
	return &readServers{ref: ref, lines: lines, reads: d.reads, gen: rd.st.gen}
}

// current reports whether every read answers the same in the render's snapshot:
// they do when this render read them.
func (s *readServers) current(st *renderState) bool {
	if s.gen == st.gen {
		return true
	}
	for _, r := range s.reads {
		if !st.same(r) {
			return false
		}
	}
	return true
}

// gatewayServerLines are the server lines of Service port ref, the servers sorted,
// then the comments.
func gatewayServerLines(rd reader, ref serviceRef) serverLines {
	lines := endpointLines(rd.fetch(gatewayEndpointsStore, []string{ref.namespace, ref.service}), ref.namespace, ref.port)
	slices.SortStableFunc(lines, func(a, b serverLine) int {
		switch { // (comments after the servers, in their order)
		case a.comment && b.comment:
			return 0
		case a.comment:
			return 1
		case b.comment:
			return -1
		}
		return strings.Compare(a.text, b.text)
	})
	return lines
}

// servicePortName finds the Service port named port, or numbered so: its name.
func servicePortName(svcs []snapshot.Object, port string) (string, bool) {
	if len(svcs) == 0 {
		return "", false
	}
	number, err := strconv.Atoi(port)
	isNumber := err == nil && strconv.Itoa(number) == port // ("080" names no port)
	for _, p := range formOf(svcs[0], formService, serviceFormOf).ports {
		if p.name == port || isNumber && p.number == number {
			return p.name, true
		}
	}
	return "", false
}
