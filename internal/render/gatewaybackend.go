package render

import (
	"strconv"
	"strings"

	"github.com/open2b/scriggo/native"
)

// The stores the gateway library's backend helpers read: its watched resources.
const (
	gatewayHTTPRoutesStore  = "http-routes"
	gatewayGRPCRoutesStore  = "grpc-routes"
	gatewayServicesStore    = "services"
	gatewayEndpointsStore   = "endpoints"
	gatewayTLSPoliciesStore = "backend-tls-policies"
	gatewayConfigMapsStore  = "config-maps"
	gatewayGrantsStore      = "reference-grants"
)

// gateway500 is the backend of a rule that cannot be routed (it answers 500).
const gateway500 = "haptic_gw_500"

// gatewayBackendRef is the backend that backendRef b of a rule of route routes to,
// added to s the first time (s.Backends with its servers and header map lines), or
// the 500 backend when it does not resolve (a missing Service or port, a kind other
// than Service, no ReferenceGrant: the route's status says why) or cannot be used (a
// filter other than a header modifier, a BackendTLSPolicy it cannot follow: noted).
// dirs and suffix are the rule's directives and their part of the name. A template
// step per field of this was half of a full render at 5,000 routes.
func (rd reader) gatewayBackendRef(env native.Env, s *GatewayState, route *gwRoute, b *gwBackendRef, dirs []string, suffix string) string {
	id, rns := route.id, route.namespace
	bns, bname, port := b.namespace, b.name, b.port
	svcs := rd.getSingle(gatewayServicesStore, []string{bns, bname})
	// HTTP/2 to the servers (proto h2): GRPCRoutes, and Service ports with
	// appProtocol kubernetes.io/h2c (prior knowledge, no upgrade)
	h2 := route.h2
	spName, found := "", false
	// (the names become the backend name: DNS labels only, as Service names are)
	var svc *serviceForm
	if len(svcs) > 0 {
		svc = formOf(svcs[0], formService, serviceFormOf)
	}
	if svc != nil && b.group == "" && b.kind == "Service" && port > 0 && svc.hasSpec &&
		isDNSLabel(bns) && isDNSLabel(bname) &&
		(bns == rns || rd.gatewayGranted(gatewayGroup, route.kind, rns, "", "Service", bns, bname)) {
		for _, sp := range svc.ports {
			if sp.number == port {
				spName, found = sp.name, true
				h2 = h2 || sp.appProtocol == "kubernetes.io/h2c"
				break
			}
		}
	}
	var btls map[string]any
	if found {
		btls = rd.gatewayBackendTLS(bns, bname, spName)
	}
	// the client certificate it presents: the route's Gateways'
	if btls != nil && btls["problem"].(string) == "" {
		if c := rd.gatewayRouteClientCert(s, route); c != nil && c[2] != "" {
			btls = map[string]any{"policy": btls["policy"], "problem": c[2]}
		} else if c != nil {
			btls = map[string]any{"policy": btls["policy"], "ca": btls["ca"], "host": btls["host"], "verify": btls["verify"],
				"problem": "", "cert": c[0], "certPem": c[1]}
		}
	}
	field := b.field
	switch {
	case btls != nil && btls["problem"].(string) != "":
		s.Notes = append(s.Notes, id+" "+field+": BackendTLSPolicy "+btls["policy"].(string)+" of backend "+bns+"/"+bname+
			" port "+strconv.Itoa(port)+" cannot be used ("+btls["problem"].(string)+"); its share answers 500")
		return gateway500
	case !found:
		return gateway500
	}
	filters := b.filters
	var bdirs []string
	for _, f := range filters {
		switch {
		case f.typ == "RequestHeaderModifier" && f.request != nil:
			bdirs = append(bdirs, "q"+toJSON(f.request))
		case f.typ == "ResponseHeaderModifier" && f.response != nil:
			bdirs = append(bdirs, "r"+toJSON(f.response))
		default:
			s.Notes = append(s.Notes, id+" "+field+": only header modifier filters are supported here; this backend answers 500")
			return gateway500
		}
	}
	target := b.target
	if h2 {
		target += "_h2"
	}
	if btls != nil && btls["cert"] != nil {
		// routes of Gateways with other client certificates get backends of their own
		target += "_c" + sha256Hex(btls["cert"].(string))[:8]
	}
	target += suffix
	if len(bdirs) > 0 {
		target += "_f" + sha256Hex(strings.Join(bdirs, "\n"))[:8]
	}
	target = cfgWord(env, target, "backend name") // (the library writes it as it is)
	if s.BackendIdx[target] {
		return target
	}
	s.BackendIdx[target] = true
	// its header lines go with the backend: written once, whichever route brings it
	var hdr []string
	for _, f := range filters {
		if f.request != nil {
			hdr = gatewayHeaderMapLines(env, s, id, f.field+".requestHeaderModifier", target, "q", f.request, hdr)
		}
		if f.response != nil {
			hdr = gatewayHeaderMapLines(env, s, id, f.field+".responseHeaderModifier", target, "r", f.response, hdr)
		}
	}
	s.Backends = append(s.Backends, &GatewayBackend{Name: target, Directives: dirs, H2: h2, Hdr: hdr, TLS: btls,
		servers: rd.readServers(serviceRef{bns, bname, spName})})
	return target
}

// gatewayHeaderMapLines is lines with the gateway-backend-headers.map line of header
// modifiers ops ({set, add, remove}) keyed "<key>/<phase>" (none when every value is
// empty). A header name or value HAProxy cannot take is the render's problem
// (s.Problem).
func gatewayHeaderMapLines(env native.Env, s *GatewayState, id, field, key, phase string, ops map[string]any, lines []string) []string {
	var hops [][]string
	for _, op := range [...]string{"set", "add", "remove"} {
		var hs [][]string
		if op == "remove" {
			names, _ := ops["remove"].([]string)
			for _, n := range names {
				hs = append(hs, []string{n, "1"})
			}
		} else {
			hs, _ = ops[op].([][]string)
		}
		for _, h := range hs {
			if p := headerProblem(id, field, h[0], h[1]); p != "" {
				gatewayBad(s, p)
				return lines
			}
			if v := strings.TrimSpace(h[1]); v != "" {
				hops = append(hops, []string{op, h[0], v})
			}
		}
	}
	if len(hops) == 0 {
		return lines
	}
	return append(lines, mapKey(env, key+"/"+phase, id+": "+field)+" "+headerOps(env, hops, id+": "+field))
}

// headerProblem is why a header modifier of name and value cannot be written, or "".
func headerProblem(id, field, name, value string) string {
	if !isHeaderName(name) {
		return id + ": " + field + ": " + toJSON(name) + " is not a valid header name"
	}
	if p := valueProblem(value); p != "" {
		return id + ": " + field + ": header " + name + ": value " + p
	}
	return ""
}

// gatewayBad makes msg the render's problem unless it has one.
func gatewayBad(s *GatewayState, msg string) {
	if s.Problem == "" {
		s.Problem = msg
	}
}

// gatewayGranted is gateway_granted(fromGroup, fromKind, fromNs, toGroup, toKind,
// toNs, toName): whether a ReferenceGrant in toNs lets objects of that kind in fromNs
// refer to toName (a grant without a name covers every object of the kind).
func (rd reader) gatewayGranted(fromGroup, fromKind, fromNs, toGroup, toKind, toNs, toName string) bool {
	for _, rg := range rd.fetch(gatewayGrantsStore, []string{toNs}) {
		spec, _ := rg.Raw["spec"].(map[string]any)
		from := false
		for _, f := range rawMaps(spec["from"]) {
			from = from || rawString(f["group"]) == fromGroup && rawString(f["kind"]) == fromKind && rawString(f["namespace"]) == fromNs
		}
		if !from {
			continue
		}
		for _, t := range rawMaps(spec["to"]) {
			if rawString(t["group"]) == toGroup && rawString(t["kind"]) == toKind && (rawString(t["name"]) == "" || rawString(t["name"]) == toName) {
				return true
			}
		}
	}
	return false
}

// gatewayBackendTLS is the BackendTLSPolicy of Service port bns/bname/spName: nil
// without one, else {policy: "ns/name", ca: PEM bundle ("" for the system CAs), host:
// the SNI, verify: the name the certificate must hold, problem: why it cannot be used
// ("" when it can)}. A port's policy is the oldest (creationTimestamp, then name)
// whose targetRef names the Service with the port's name as sectionName, else the
// oldest naming the Service without one (the others are Conflicted: the status says
// so). The servers verify the backend's certificate against the CA bundle of the
// caCertificateRefs (ConfigMaps' ca.crt in the policy's namespace) or the system CAs
// (wellKnownCACertificates System), send hostname as SNI and check that the
// certificate names it (verifyhost; a single subjectAltName of type Hostname takes
// its place). What HAProxy 2.6 cannot verify (URI subjectAltNames, more than one
// name) and any unusable reference fail closed: the backend answers 500.
func (rd reader) gatewayBackendTLS(bns, bname, spName string) map[string]any {
	policies := rd.fetch(gatewayTLSPoliciesStore, []string{bns})
	best, bestKey := -1, ""
	for i, p := range policies {
		spec, _ := p.Raw["spec"].(map[string]any)
		for _, t := range rawMaps(spec["targetRefs"]) {
			if rawString(t["group"]) != "" || rawString(t["kind"]) != "Service" || rawString(t["name"]) != bname {
				continue
			}
			rank := "1"
			if section := rawString(t["sectionName"]); section != "" {
				if spName == "" || section != spName {
					continue
				}
				rank = "0"
			}
			meta, _ := p.Raw["metadata"].(map[string]any)
			if k := rank + " " + rawString(meta["creationTimestamp"]) + " " + rawString(meta["name"]); best < 0 || k < bestKey {
				best, bestKey = i, k
			}
		}
	}
	if best < 0 {
		return nil
	}
	spec, _ := policies[best].Raw["spec"].(map[string]any)
	v, _ := spec["validation"].(map[string]any)
	host := rawString(v["hostname"])
	out := map[string]any{"policy": bns + "/" + policies[best].Name, "ca": "", "host": host, "verify": host}
	out["problem"] = rd.backendTLSProblem(bns, v, out)
	return out
}

// backendTLSProblem checks a BackendTLSPolicy's validation v, filling out's verify
// name and CA bundle: why HAProxy cannot follow it, or "".
func (rd reader) backendTLSProblem(bns string, v, out map[string]any) string {
	if host := rawString(v["hostname"]); !isDNSSubdomain(host) {
		return "hostname " + toJSON(host) + " is not a DNS name"
	}
	if sans := rawMaps(v["subjectAltNames"]); len(sans) > 0 {
		name := rawString(sans[0]["hostname"])
		switch {
		case len(sans) > 1 || rawString(sans[0]["type"]) != "Hostname":
			return "subjectAltNames: HAProxy 2.6 verifies one DNS name (verifyhost); URI names and more than one name are not supported"
		case !isDNSSubdomain(name):
			return "subjectAltNames: " + toJSON(name) + " is not a DNS name (wildcards are not supported)"
		}
		out["verify"] = name
	}
	refs := rawMaps(v["caCertificateRefs"])
	if len(refs) == 0 {
		if wk := rawString(v["wellKnownCACertificates"]); wk != "System" {
			return "wellKnownCACertificates " + toJSON(wk) + " is not supported (System is)"
		}
		return ""
	}
	bundle := ""
	for _, ref := range refs {
		what := "caCertificateRef " + toJSON(rawString(ref["name"]))
		if rawString(ref["group"]) != "" || rawString(ref["kind"]) != "ConfigMap" {
			return what + " is not a ConfigMap"
		}
		cms := rd.getSingle(gatewayConfigMapsStore, []string{bns, rawString(ref["name"])})
		if len(cms) == 0 {
			return what + " does not exist"
		}
		data, _ := cms[0].Raw["data"].(map[string]any)
		ca := strings.TrimSpace(rawString(data["ca.crt"]))
		if why := caProblem(ca); why != "" {
			return what + ": ca.crt " + why
		}
		bundle += ca + "\n"
	}
	out["ca"] = bundle
	return ""
}
