package render

import "strings"

// The stores the client certificate of TLS backends is read from.
const (
	gatewayGatewaysStore = "gateways"
	gatewaySecretsStore  = "secrets"
)

// gatewayRouteClientCert is the client certificate presented to the servers of a TLS
// backend (one with a BackendTLSPolicy) that route brings: that of the Gateways the
// route attaches to (s.Seen's attachments), which must agree. [file name, PEM
// (certificate and key), why it cannot be used ("" when it can)], nil for none.
func (rd reader) gatewayRouteClientCert(s *GatewayState, route *gwRoute) []string {
	id := route.id
	var out []string
	first := ""
	seen := map[string]bool{}
	for _, p := range route.parents {
		pkey := p.namespace + "/" + p.name
		if p.kind == "ListenerSet" {
			pkey = "ListenerSet " + pkey
		}
		for _, lid := range s.ListenersOfGw[pkey] {
			gid := s.Listeners[lid]["frontend"].(map[string]any)["gateway"].(string)
			if !s.Seen["a "+id+" "+lid] || seen[gid] {
				continue
			}
			seen[gid] = true
			gns, gname, _ := strings.Cut(gid, "/")
			c := rd.gatewayBackendClientCert(gns, gname)
			name := ""
			if c != nil {
				name = c[0] + c[2]
			}
			if len(seen) == 1 {
				out, first = c, name
			} else if name != first {
				return []string{"", "", "the route's Gateways present different client certificates to backends (spec.tls.backend); " +
					"serve it from one Gateway, or give each Gateway its own HAProxy pods (PerGateway)"}
			}
		}
	}
	return out
}

// gatewayBackendClientCert is the client certificate Gateway gns/gname presents to
// TLS backends (spec.tls.backend.clientCertificateRef): nil without one, else [file
// name, PEM, why it cannot be used]. The reason never quotes the Secret.
func (rd reader) gatewayBackendClientCert(gns, gname string) []string {
	gws := rd.getSingle(gatewayGatewaysStore, []string{gns, gname})
	if len(gws) == 0 {
		return nil
	}
	spec, _ := gws[0].Raw["spec"].(map[string]any)
	tls, _ := spec["tls"].(map[string]any)
	backend, _ := tls["backend"].(map[string]any)
	ref, _ := backend["clientCertificateRef"].(map[string]any)
	if ref == nil {
		return nil
	}
	cns, name := orString(ref["namespace"], gns), rawString(ref["name"])
	what := "Gateway " + gns + "/" + gname + " clientCertificateRef " + toJSON(cns+"/"+name)
	switch {
	case rawString(ref["group"]) != "" || orString(ref["kind"], "Secret") != "Secret":
		return []string{"", "", what + " is not a Secret"}
	case !isDNSLabel(cns) || !isDNSSubdomain(name):
		return []string{"", "", what + " is not a Secret name"}
	case cns != gns && !rd.gatewayGranted(gatewayGroup, "Gateway", gns, "", "Secret", cns, name):
		return []string{"", "", what + " is not allowed by a ReferenceGrant"}
	}
	secrets := rd.getSingle(gatewaySecretsStore, []string{cns, name})
	var data map[string]any
	if len(secrets) > 0 {
		data, _ = secrets[0].Raw["data"].(map[string]any)
	}
	crt, key := rawString(data["tls.crt"]), rawString(data["tls.key"])
	if crt == "" || key == "" || !regexMatch(`^[A-Za-z0-9+/=\s]*$`, crt+key) {
		return []string{"", "", what + " is not a TLS Secret with tls.crt and tls.key"}
	}
	crt, key = strings.TrimSpace(b64decode(crt)), strings.TrimSpace(b64decode(key))
	if why := tlsProblem(crt, key); why != "" {
		return []string{"", "", what + ": " + why}
	}
	return []string{"gw-client-" + cns + "_" + name + ".pem", crt + "\n" + key + "\n", ""}
}
