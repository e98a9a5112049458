package render

import (
	"strconv"
	"strings"
	canonical "unique"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// Compact forms. A full render reads every Service, EndpointSlice and route once;
// walking their decoded JSON (a map per object, spec, port and endpoint) was a
// fifth of it, most of that cache misses on maps spread over the heap. The helpers
// read a compact form instead, made once per admitted version of an object and kept
// with it (snapshot.Forms): every later render, full or not, of any fleet, reads
// the form. A form is a function of the object alone; what a helper derives from
// several objects, or from the render's arguments, stays in the helper.

// formKind names a kind of form an object may keep.
type formKind uint8

const (
	formEndpointSlice formKind = iota
	formService
	formHTTPRoute
	formGRPCRoute
	formIngress
)

// PrepareForms makes the forms of an object of a watched resource (apiVersion and
// plural as watched) that the helpers read, as a store admits it (store.Builder's
// Prepare): a render then finds them made, the first one after a start included.
func PrepareForms(apiVersion, resources string, o snapshot.Object) {
	group, _, grouped := strings.Cut(apiVersion, "/")
	if !grouped {
		group = "" // the core group: "v1"
	}
	switch group + " " + resources {
	case "discovery.k8s.io endpointslices":
		formOf(o, formEndpointSlice, endpointSliceForm)
	case " services":
		formOf(o, formService, serviceFormOf)
	case "networking.k8s.io ingresses":
		formOf(o, formIngress, ingressFormOf)
	case gatewayGroup + " httproutes":
		formOf(o, formHTTPRoute, httpRouteForm)
	case gatewayGroup + " grpcroutes":
		formOf(o, formGRPCRoute, grpcRouteForm)
	}
}

// formOf returns o's form of kind, made by build from o.Raw the first time.
func formOf[T any](o snapshot.Object, kind formKind, build func(raw map[string]any) T) T {
	if o.Forms == nil {
		return build(o.Raw)
	}
	if v, ok := o.Forms.Get(kind); ok {
		return v.(T)
	}
	v := build(o.Raw)
	o.Forms.Put(kind, v)
	return v
}

// sliceForm is an EndpointSlice: its ports, and the addresses of its ready
// endpoints (an endpoint without conditions counts as ready) in order.
type sliceForm struct {
	ports []slicePort
	addrs []string
	ip    []bool // addrs[i] is an IP address (a server); otherwise a note
}

// slicePort is a port of an EndpointSlice, with the server names of its addresses
// on it and "<name> <address>:<port>" ("" for an address that is not an IP address).
type slicePort struct {
	name           string
	number         int
	text           string
	servers, lines []string
}

func endpointSliceForm(raw map[string]any) *sliceForm {
	f := &sliceForm{}
	endpoints, _ := raw["endpoints"].([]any)
	for _, ev := range endpoints {
		ep, _ := ev.(map[string]any)
		if c, ok := ep["conditions"].(map[string]any); ok && c["ready"] != true {
			continue
		}
		addrs, _ := ep["addresses"].([]any)
		for _, av := range addrs {
			addr := rawString(av)
			f.addrs = append(f.addrs, addr)
			f.ip = append(f.ip, isIP(addr))
		}
	}
	ports, _ := raw["ports"].([]any)
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		sp := slicePort{name: portName(pm), number: toInt(pm["port"])}
		if sp.number != 0 {
			sp.text = strconv.Itoa(sp.number)
			sp.servers = make([]string, len(f.addrs))
			sp.lines = make([]string, len(f.addrs))
			for i, addr := range f.addrs {
				if f.ip[i] {
					sp.lines[i] = serverName(addr, sp.text) + " " + addr + ":" + sp.text
					sp.servers[i] = sp.lines[i][:len(sp.lines[i])-len(addr)-len(sp.text)-2]
				}
			}
		}
		f.ports = append(f.ports, sp)
	}
	return f
}

// portName is a Service's or EndpointSlice's port's name, canonical: service_servers
// compares the Service port's name with each EndpointSlice port's, and names made
// one string compare at their pointers instead of reading both (objects a watch
// interned are so already; those of `haptic benchmark`'s files are not).
func portName(port map[string]any) string { return canonical.Make(rawString(port["name"])).Value() }

// serviceForm is a Service: whether it has a spec, and its ports.
type serviceForm struct {
	hasSpec bool
	ports   []servicePort
}

// servicePort is a port of a Service: its name, number and appProtocol.
type servicePort struct {
	name, appProtocol string
	number            int
}

func serviceFormOf(raw map[string]any) *serviceForm {
	spec, hasSpec := raw["spec"].(map[string]any)
	ports, _ := spec["ports"].([]any)
	f := &serviceForm{hasSpec: hasSpec && spec != nil, ports: make([]servicePort, 0, len(ports))}
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		f.ports = append(f.ports, servicePort{portName(pm), rawString(pm["appProtocol"]), toInt(pm["port"])})
	}
	return f
}

// ingressForm is an Ingress as ingress_routes and its neighbours read it: the rules
// with an http part and the paths with a service backend, the TLS entries with a
// Secret name, each with its index for messages.
type ingressForm struct {
	usable         bool // it has metadata and a spec (ingresses_of_class skips others)
	class          string
	annotations    map[string]any
	defaultBackend *ingressServiceRef // a service backend, or nil
	rules          []ingressRuleForm
	tls            []ingressTLSForm
}

type ingressServiceRef struct{ svc, port string }

type ingressRuleForm struct {
	index int
	host  string // lower-cased
	paths []ingressPathForm
}

type ingressPathForm struct {
	index int
	path  string // "/" when empty
	exact bool
	ingressServiceRef
}

type ingressTLSForm struct {
	index  int
	secret string
	hosts  []string // lower-cased
}

func ingressFormOf(raw map[string]any) *ingressForm {
	meta, hasMeta := raw["metadata"].(map[string]any)
	spec, hasSpec := raw["spec"].(map[string]any)
	f := &ingressForm{usable: hasMeta && hasSpec, class: rawString(spec["ingressClassName"])}
	f.annotations, _ = meta["annotations"].(map[string]any)
	if b, ok := spec["defaultBackend"].(map[string]any); ok {
		if svc, port, ok := serviceBackend(b); ok {
			f.defaultBackend = &ingressServiceRef{svc, port}
		}
	}
	rules, _ := spec["rules"].([]any)
	for ri, r := range rules {
		rule, _ := r.(map[string]any)
		http, ok := rule["http"].(map[string]any)
		if !ok {
			continue
		}
		rf := ingressRuleForm{index: ri, host: strings.ToLower(rawString(rule["host"]))}
		paths, _ := http["paths"].([]any)
		for pi, pv := range paths {
			p, _ := pv.(map[string]any)
			b, _ := p["backend"].(map[string]any)
			svc, port, ok := serviceBackend(b)
			if !ok {
				continue
			}
			path := rawString(p["path"])
			if path == "" {
				path = "/"
			}
			rf.paths = append(rf.paths, ingressPathForm{pi, path, rawString(p["pathType"]) == "Exact", ingressServiceRef{svc, port}})
		}
		f.rules = append(f.rules, rf)
	}
	entries, _ := spec["tls"].([]any)
	for ti, tv := range entries {
		t, _ := tv.(map[string]any)
		secret := rawString(t["secretName"])
		if secret == "" {
			continue
		}
		tf := ingressTLSForm{index: ti, secret: secret}
		hosts, _ := t["hosts"].([]any)
		for _, hv := range hosts {
			tf.hosts = append(tf.hosts, strings.ToLower(rawString(hv)))
		}
		f.tls = append(f.tls, tf)
	}
	return f
}
