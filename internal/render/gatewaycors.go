package render

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/open2b/scriggo/native"
)

// corsOrigin is an origin a CORS filter may name: scheme://host[:port], the host of
// letters, digits, '.', '-', '_' and '*' (a wildcard).
var corsOrigin = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://([A-Za-z0-9_.*-]+)(:[0-9]{1,5})?$`)

var (
	corsMethod = regexp.MustCompile(`^[A-Z]+$`)
	corsHeader = regexp.MustCompile(`^[A-Za-z0-9!+.^_~-]+$`)
)

// gatewayCorsRule writes the CORS filter of a rule (the first) as map lines keyed by
// the rule key rk (<route wkey>/<rule>) and reports whether the rule has one:
//
//	cors.map                  <rk> <methods>|<headers>|<max-age>|<expose>|<true or empty>|<*|list|wild>
//	                          <rk>/<origin> <origin>   (exact origins, lower-case; http and
//	                                                    https also with their default port)
//	gateway-cors-origins.map  ^<rk>/<scheme>://<host regex>(?::<default port>)?$ <origin>
//	                          (origins with a '*' in their host, read with map_reg)
//
// None of it is a haproxy.cfg line. Values become map lines, so they are validated
// strictly: a bad one is the render's problem (s.Problem).
func gatewayCorsRule(env native.Env, s *GatewayState, id string, rule *gwRule, rk string) bool {
	var c map[string]any
	cf := ""
	for _, f := range rule.filters {
		if c == nil && f.typ == "CORS" && f.cors != nil {
			c, cf = f.cors, f.field+".cors"
		}
	}
	if c == nil {
		return false
	}
	mode := "list"
	var exact, wild []string
	for oi, o := range c["origins"].([]string) {
		of := cf + ".allowOrigins[" + strconv.Itoa(oi) + "]"
		if o == "*" {
			mode = "*"
			continue
		}
		m := corsOrigin.FindStringSubmatch(o)
		if m == nil {
			gatewayBad(s, id+": "+of+": "+toJSON(o)+" is not * or an origin scheme://host[:port] (host: letters, digits, '.', '-', '_', '*')")
			return false
		}
		scheme, host, port := strings.ToLower(m[1]), strings.ToLower(m[2]), m[3]
		def := ""
		switch scheme {
		case "http":
			def = "80"
		case "https":
			def = "443"
		}
		if port != "" {
			n, _ := strconv.Atoi(port[1:])
			if n < 1 || n > 65535 {
				gatewayBad(s, id+": "+of+": "+toJSON(o)+" has a port outside 1-65535")
				return false
			}
			port = strconv.Itoa(n)
		}
		shown := scheme + "://" + host
		if port != "" && port != def {
			shown += ":" + port
		}
		value := mapValue(env, shown, id+": "+of)
		if !strings.Contains(host, "*") {
			exact = append(exact, mapKey(env, rk+"/"+shown, id+": "+of)+" "+value)
			if def != "" && (port == "" || port == def) {
				exact = append(exact, mapKey(env, rk+"/"+shown+":"+def, id+": "+of)+" "+value)
			}
			continue
		}
		re := "^" + regexp.QuoteMeta(rk+"/"+scheme+"://") + strings.ReplaceAll(regexp.QuoteMeta(host), `\*`, `[a-z0-9._-]+`)
		if port != "" && port != def {
			re += ":" + port
		} else if def != "" {
			re += "(?::" + def + ")?"
		}
		wild = append(wild, mapKey(env, re+"$", id+": "+of)+" "+value)
	}
	if mode != "*" {
		if len(wild) > 0 {
			mode = "wild"
		}
		s.CorsLines = append(s.CorsLines, exact...)
		s.CorsOriginLines = append(s.CorsOriginLines, wild...)
	}
	methods, ok := corsList(s, id, cf+".allowMethods", c["methods"].([]string), corsMethod, "an HTTP method (upper-case letters) or *")
	if !ok {
		return false
	}
	headers, ok := corsList(s, id, cf+".allowHeaders", c["headers"].([]string), corsHeader, "a header name (letters, digits, !+.^_~-)")
	if !ok {
		return false
	}
	expose, ok := corsList(s, id, cf+".exposeHeaders", c["expose"].([]string), corsHeader, "a header name (letters, digits, !+.^_~-)")
	if !ok {
		return false
	}
	// "*" may not be the exposed headers' value with credentials, and no request
	// header tells which ones to name: none are exposed then
	creds := c["credentials"].(bool)
	if creds && len(expose) == 1 && expose[0] == "*" {
		expose = nil
	}
	maxAge := c["maxAge"].(int)
	if maxAge <= 0 {
		maxAge = 5
	}
	credsValue := ""
	if creds {
		credsValue = "true"
	}
	s.CorsLines = append(s.CorsLines, mapKey(env, rk, id+": metadata.name")+" "+mapValue(env, strings.Join(methods, ",")+"|"+
		strings.Join(headers, ",")+"|"+strconv.Itoa(maxAge)+"|"+strings.Join(expose, ",")+"|"+credsValue+"|"+mode, id+": "+cf))
	return true
}

// corsList is a CORS filter's list of methods or header names: ["*"] when it holds
// "*"; false after a value that valid does not match (s.Problem).
func corsList(s *GatewayState, id, field string, values []string, valid *regexp.Regexp, what string) ([]string, bool) {
	var out []string
	for i, v := range values {
		if v == "*" {
			return []string{"*"}, true
		}
		if !valid.MatchString(v) {
			gatewayBad(s, id+": "+field+"["+strconv.Itoa(i)+"]: "+toJSON(v)+" is not "+what)
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}
