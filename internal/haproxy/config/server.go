package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Server is a server line of a backend or listen section: server <name> <address>
// [options...]. The planner (what can change at runtime) and the agent's read-back
// (what must be running) both read server lines with ReadServer.
type Server struct {
	Name    string
	Address string // as written: "10.0.0.1:80", "[::1]:80", "svc:80", "unix@/x", ...
	// Options are the words after the address, grouped by keyword as HAProxy reads
	// them (serverOptionValues); a word that is not a known keyword is an option of
	// its own with Known false, and the words after it are read on.
	Options []ServerOption
	Line    Directive
}

// ServerOption is one keyword of a server line and its values.
type ServerOption struct {
	Keyword string
	Values  []string
	// Known is false for a keyword whose number of values is not known here.
	Known bool
	// Incomplete is true when the line ends before all of the keyword's values.
	Incomplete bool
}

// serverOptionValues is how many values each server keyword takes (HAProxy 2.6 to
// 3.x, "5.2. Server and default-server options"). Keywords of variable length
// (source) are left out: they read as unknown.
var serverOptionValues = map[string]int{
	"addr": 1, "agent-addr": 1, "agent-check": 0, "agent-inter": 1, "agent-port": 1, "agent-send": 1,
	"allow-0rtt": 0, "alpn": 1, "backup": 0, "ca-file": 1, "check": 0, "check-alpn": 1, "check-proto": 1,
	"check-send-proxy": 0, "check-sni": 1, "check-ssl": 0, "check-via-socks4": 0, "ciphers": 1,
	"ciphersuites": 1, "client-sigalgs": 1, "cookie": 1, "crl-file": 1, "crt": 1, "curves": 1,
	"disabled": 0, "downinter": 1, "enabled": 0, "error-limit": 1, "fall": 1, "fastinter": 1,
	"force-sslv3": 0, "force-tlsv10": 0, "force-tlsv11": 0, "force-tlsv12": 0, "force-tlsv13": 0,
	"guid": 1, "hash-key": 1, "id": 1, "init-addr": 1, "init-state": 1, "inter": 1, "log-bufsize": 1,
	"log-proto": 1, "maxconn": 1, "maxqueue": 1, "max-reuse": 1, "minconn": 1, "namespace": 1,
	"no-agent-check": 0, "no-backup": 0, "no-check": 0, "no-check-ssl": 0, "no-send-proxy": 0,
	"no-send-proxy-v2": 0, "no-send-proxy-v2-ssl": 0, "no-send-proxy-v2-ssl-cn": 0, "no-ssl": 0,
	"no-ssl-reuse": 0, "no-sslv3": 0, "no-tfo": 0, "no-tls-tickets": 0, "no-tlsv10": 0, "no-tlsv11": 0,
	"no-tlsv12": 0, "no-tlsv13": 0, "no-verifyhost": 0, "non-stick": 0, "npn": 1, "observe": 1,
	"on-error": 1, "on-marked-down": 1, "on-marked-up": 1, "pool-conn-name": 1, "pool-low-conn": 1,
	"pool-max-conn": 1, "pool-purge-delay": 1, "port": 1, "proto": 1, "proxy-v2-options": 1,
	"redir": 1, "resolve-net": 1, "resolve-opts": 1, "resolve-prefer": 1, "resolvers": 1, "rise": 1,
	"send-proxy": 0, "send-proxy-v2": 0, "send-proxy-v2-ssl": 0, "send-proxy-v2-ssl-cn": 0,
	"shard": 1, "sigalgs": 1, "slowstart": 1, "sni": 1, "socks4": 1, "ssl": 0, "ssl-max-ver": 1,
	"ssl-min-ver": 1, "ssl-reuse": 0, "stick": 0, "strict-maxconn": 0, "tcp-ut": 1, "tfo": 0,
	"tls-tickets": 0, "track": 1, "verify": 1, "verifyhost": 1, "weight": 1, "ws": 1,
}

// ReadServer reads a server directive. It needs a name and an address; the options
// are grouped but not judged (see Server.Options).
func ReadServer(d Directive) (Server, error) {
	if len(d.Args) < 2 {
		return Server{Line: d}, fmt.Errorf("server line needs a name and an address")
	}
	s := Server{Name: d.Args[0], Address: d.Args[1], Line: d}
	for i := 2; i < len(d.Args); i++ {
		kw := d.Args[i]
		n, known := serverOptionValues[kw]
		if !known {
			s.Options = append(s.Options, ServerOption{Keyword: kw})
			continue
		}
		o := ServerOption{Keyword: kw, Known: true}
		if i+n >= len(d.Args) {
			o.Values, o.Incomplete = d.Args[i+1:], true
			s.Options = append(s.Options, o)
			break
		}
		o.Values = d.Args[i+1 : i+1+n]
		s.Options = append(s.Options, o)
		i += n
	}
	return s, nil
}

// Weight is the weight the line sets (its last weight option): ok is false when it
// sets none; err when the value is not 0-256.
func (s Server) Weight() (weight int, ok bool, err error) {
	for _, o := range s.Options {
		if o.Keyword != "weight" || !o.Known || o.Incomplete {
			continue
		}
		w, perr := ParseWeight(o.Values[0])
		if perr != nil {
			return 0, true, perr
		}
		weight, ok = w, true
	}
	return weight, ok, nil
}

// ParseWeight reads a server weight: 0 to 256.
func ParseWeight(v string) (int, error) {
	w, err := strconv.Atoi(v)
	if err != nil || w < 0 || w > 256 {
		return 0, fmt.Errorf("weight %q is not 0-256", v)
	}
	return w, nil
}

// ServerOptionValues says how many values a server or default-server keyword takes;
// known is false for keywords not listed (see serverOptionValues).
func ServerOptionValues(keyword string) (values int, known bool) {
	values, known = serverOptionValues[keyword]
	return values, known
}

// Disabled reports whether the server starts in maintenance: the last of disabled
// and enabled wins.
func (s Server) Disabled() bool {
	disabled := false
	for _, o := range s.Options {
		switch o.Keyword {
		case "disabled":
			disabled = true
		case "enabled":
			disabled = false
		}
	}
	return disabled
}

// IPPort reads the address as "ip:port" or "[ipv6]:port". Names, prefixes (unix@,
// ipv4@), port ranges and offsets are errors: the runtime cannot set them, and the
// read-back does not compare them.
func (s Server) IPPort() (string, int, error) {
	addr := s.Address
	var host, port string
	if strings.HasPrefix(addr, "[") {
		h, p, err := net.SplitHostPort(addr)
		if err != nil {
			return "", 0, fmt.Errorf("server address %q: %w", addr, err)
		}
		host, port = h, p
	} else if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		host, port = addr[:i], addr[i+1:]
	} else {
		return "", 0, fmt.Errorf("server address %q has no port", addr)
	}
	if net.ParseIP(host) == nil {
		return "", 0, fmt.Errorf("server address %q is not an IP address and port", addr)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strings.HasPrefix(port, "+") {
		return "", 0, fmt.Errorf("server address %q has no plain port", addr)
	}
	return host, n, nil
}

// Servers reads the server lines of every backend and listen section: section name
// → server name → line, and the sections with a server-template line (whose
// servers have generated names). A server line without a name and an address is
// left out.
func (c *Config) Servers() (servers map[string]map[string]Server, templated map[string]bool) {
	servers, templated = map[string]map[string]Server{}, map[string]bool{}
	for _, sec := range c.Sections {
		if !sec.IsProxy() || sec.Name == "" {
			continue
		}
		byName := servers[sec.Name]
		if byName == nil {
			byName = map[string]Server{}
			servers[sec.Name] = byName
		}
		for _, d := range sec.Directives {
			switch d.Keyword {
			case "server-template":
				templated[sec.Name] = true
			case "server":
				if s, err := ReadServer(d); err == nil {
					byName[s.Name] = s
				}
			}
		}
	}
	return servers, templated
}
