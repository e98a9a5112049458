package render

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/open2b/scriggo/native"
)

// gatewayNamespacesStore is the gateway library's store of Namespaces (by name).
const gatewayNamespacesStore = "namespaces"

// gatewayAttach is the host keys a route (native form) attaches with, as [frontend
// prefix, host key, listener prefix], one per listener it may attach to (parentRefs
// by section and port, the listener's allowedRoutes) and hostname the listener's and
// the route's have in common; nil when there is none (the route is not rendered), or
// the render's error for an invalid hostname. It marks each attachment in s.Seen
// ("a <id> <listener>") and each host key in s.Hosts. The host keys are appended to
// hostKeys (the caller's room for the few most routes have).
func (rd reader) gatewayAttach(env native.Env, s *GatewayState, route *gwRoute, hostKeys [][3]string) ([][3]string, string) {
	id, rns, kind := route.id, route.namespace, route.kind
	var room [4]string
	attached := room[:0]
	for _, p := range route.parents {
		if p.group != gatewayGroup || p.kind != "Gateway" && p.kind != "ListenerSet" {
			continue
		}
		// a Gateway's own listeners, or a ListenerSet's
		pkey := p.namespace + "/" + p.name
		if p.kind == "ListenerSet" {
			pkey = "ListenerSet " + pkey
		}
		for _, lid := range s.ListenersOfGw[pkey] {
			li := s.Listeners[lid]
			if p.section != "" && p.section != li["name"].(string) || p.port != "0" && p.port != li["port"].(string) {
				continue
			}
			if rd.gatewayAllowed(s, lid, rns, kind) && s.firstSeen("a "+id+" "+lid) {
				attached = append(attached, lid)
			}
		}
	}
	hostnames := route.hostnames
	if len(hostnames) == 0 {
		hostnames = []string{""}
	}
	// frontend prefix, host key, listener prefix; each host key once
	for _, lid := range attached {
		li := s.Listeners[lid]
		fp, lp, lh := li["frontend"].(map[string]any)["fp"].(string), li["prefix"].(string), li["hostname"].(string)
		for hi, rh := range hostnames {
			rh = strings.ToLower(rh)
			if rh != "" && !isDNSHost(rh) {
				return nil, id + ": spec.hostnames[" + strconv.Itoa(hi) + "]: " + toJSON(rh) + " is not a valid hostname"
			}
			h := lh
			if rh != "" {
				if h = gatewayHostIntersection(lh, rh); h == "" {
					continue
				}
			}
			var hk string
			if h != "" {
				hk = mapKeyOf(env, lp+h, id, "spec.hostnames")
				s.Hosts[hk] = true
			} else {
				hk = lp + "*"
			}
			if !slices.ContainsFunc(hostKeys, func(k [3]string) bool { return k[1] == hk }) {
				hostKeys = append(hostKeys, [3]string{fp, hk, lp})
			}
		}
	}
	return hostKeys, ""
}

// gatewayAllowed is gateway_allowed(s, listener, routeNamespace, routeKind): whether
// the listener's allowedRoutes admit routes of that kind from that namespace.
func (rd reader) gatewayAllowed(s *GatewayState, lid, routeNs, routeKind string) bool {
	li := s.Listeners[lid]
	switch li["from"].(string) {
	case "All":
	case "Same":
		if routeNs != li["namespace"].(string) {
			return false
		}
	case "Selector":
		if !li["hasSelector"].(bool) || !labelsSelected(li["matchLabels"].(map[string]string), li["exprs"].([][]string), rd.gatewayNamespaceLabels(routeNs)) {
			return false
		}
	default:
		return false
	}
	kinds := li["kinds"].([]string)
	if len(kinds) == 0 {
		return true
	}
	for _, k := range kinds {
		if k == gatewayGroup+"/"+routeKind {
			return true
		}
	}
	return false
}

// gatewayNamespaceLabels is gateway_namespace_labels(namespace): the Namespace's
// labels and the kubernetes.io/metadata.name label every Namespace has.
func (rd reader) gatewayNamespaceLabels(ns string) map[string]string {
	out := map[string]string{"kubernetes.io/metadata.name": ns}
	if objs := rd.getSingle(gatewayNamespacesStore, []string{ns}); len(objs) > 0 {
		meta, _ := objs[0].Raw["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		for k, v := range labels {
			out[k] = rawString(v)
		}
	}
	return out
}

// labelsSelected is labels_selected(matchLabels, exprs, labels): whether a label
// selector (matchLabels, and matchExpressions as [key, operator, values...]) selects
// labels. An unknown operator selects nothing.
func labelsSelected(matchLabels map[string]string, exprs [][]string, labels map[string]string) bool {
	for k, v := range matchLabels {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	for _, ex := range exprs {
		lv, ok := labels[ex[0]]
		in := false
		for _, v := range ex[2:] {
			in = in || ok && v == lv
		}
		switch ex[1] {
		case "In":
			if !in {
				return false
			}
		case "NotIn":
			if in {
				return false
			}
		case "Exists":
			if !ok {
				return false
			}
		case "DoesNotExist":
			if ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// gatewayPlainMatch adds a match without conditions as map lines, one per host key,
// each "<what makes it unique>\x00<line>" (the first route with a key wins it).
func gatewayPlainMatch(env native.Env, s *GatewayState, id string, hostKeys [][3]string, ptype, path, base, pfield, value string) {
	for _, fphk := range hostKeys {
		hk := fphk[1]
		switch ptype {
		case "Exact":
			if l, kp := keyedLine("e", hk, path, "", nil, value); s.firstSeen(l[:2+len(kp)]) {
				mapKeyOf(env, kp, id, pfield)
				s.Exact = append(s.Exact, l)
			}
		case "PathPrefix":
			if base != "" {
				if l, kb := keyedLine("pe", hk, base, "", nil, value); s.firstSeen(l[:3+len(kb)]) {
					mapKeyOf(env, kb, id, pfield)
					s.PrefixExact = append(s.PrefixExact, l)
				}
			}
			var sortKey [8]byte
			sk := strconv.AppendInt(sortKey[:0], int64(199999-len(hk)-len(base)-1), 10)
			if l, kp := keyedLine("p", hk, base, "/", append(sk, ' '), value); s.firstSeen(l[:2+len(kp)]) {
				mapKeyOf(env, kp, id, pfield)
				s.PrefixSorted = append(s.PrefixSorted, l)
				s.PlainPrefixes = append(s.PlainPrefixes, [2]string{hk, base})
			}
		default:
			re := "^" + regexp.QuoteMeta(hk) + "(?:" + trimRegexAnchors(path) + ")$"
			if k := "r " + re; s.firstSeen(k) {
				s.Regex = append(s.Regex, k+"\x00"+mapKeyOf(env, re, id, pfield)+" "+value)
			}
		}
	}
}

// keyedLine is a map line as the gateway index keeps it, "<kind> <key>\x00<line>"
// with the line "<sortKey><key> <value>", made in one piece, and its key (hk + path +
// tail) as a part of it: one string a line.
func keyedLine(kind, hk, path, tail string, sortKey []byte, value string) (line, key string) {
	line = kind + " " + hk + path + tail + "\x00" + string(sortKey) + hk + path + tail + " " + value
	end := len(line) - len(value) - 1
	return line, line[end-len(hk)-len(path)-len(tail) : end]
}

// trimRegexAnchors is a path regular expression without a leading ^ and a trailing $
// (the library anchors it itself).
func trimRegexAnchors(re string) string {
	return regexReplace(`\$$`, "", regexReplace(`^\^`, "", re))
}
