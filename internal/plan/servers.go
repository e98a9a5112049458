package plan

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// backendContext is what server changes need to know about their backend.
type backendContext struct {
	section  *Section   // the desired backend or listen section
	defaults []*Section // the defaults it inherits from, nearest first (a defaults may itself use "from")
}

// serverOptionArity lists the server keywords plan understands, with the number of
// values each takes. Anything else on a changed server line means a reload.
var serverOptionArity = map[string]int{
	"check": 0, "no-check": 0, "weight": 1, "disabled": 0, "enabled": 0,
	"inter": 1, "fastinter": 1, "downinter": 1, "fall": 1, "rise": 1, "maxconn": 1,
	"ssl": 0, "verify": 1,
}

// addableOptions are the options runtime.AddServer can express; a new server with any
// other option would run differently from what the next reload builds.
var addableOptions = map[string]bool{"check": true, "no-check": true, "weight": true, "disabled": true, "enabled": true}

// harmlessDefaultServer are default-server options a dynamic server does not miss:
// dynamic servers do not inherit default-server, so anything else would differ.
var harmlessDefaultServer = map[string]int{"no-check": 0, "init-addr": 1}

// dynamicBalance are the algorithms HAProxy 2.6 accepts dynamic servers and weight
// changes on ("Backend must use a dynamic load balancing"). Kept conservative: hash
// based, static-rr, first and random all reload.
var dynamicBalance = map[string]bool{"roundrobin": true, "leastconn": true}

// server is a parsed server line.
type server struct {
	name     string
	address  string
	port     int
	weight   int // 1 when not set
	weighted bool
	check    bool
	disabled bool
	fixed    string // the options the runtime cannot change, canonical
	addable  bool   // every option is one AddServer expresses
	problem  string // why the line cannot be handled at runtime, if it cannot
	line     Directive
}

func parseServer(d Directive) server {
	s := server{line: d, weight: 1, addable: true}
	if len(d.Args) < 2 {
		s.problem = "server line needs a name and an address"
		return s
	}
	s.name = d.Args[0]
	host, port, err := splitAddress(d.Args[1])
	if err != nil {
		s.problem = err.Error()
	}
	s.address, s.port = host, port
	var fixed []string
	for i := 2; i < len(d.Args); i++ {
		kw := d.Args[i]
		arity, known := serverOptionArity[kw]
		if !known {
			s.problem = fmt.Sprintf("server option %q is not supported at runtime", kw)
			return s
		}
		if i+arity >= len(d.Args) {
			s.problem = fmt.Sprintf("server option %q needs a value", kw)
			return s
		}
		if !addableOptions[kw] {
			s.addable = false
		}
		switch kw {
		case "weight":
			w, err := strconv.Atoi(d.Args[i+1])
			if err != nil || w < 0 || w > 256 {
				s.problem = fmt.Sprintf("weight %q is not 0-256", d.Args[i+1])
				return s
			}
			s.weight, s.weighted = w, true
		case "disabled", "enabled":
			s.disabled = kw == "disabled"
		case "check", "no-check":
			s.check = kw == "check"
			fixed = append(fixed, kw)
		default:
			fixed = append(fixed, d.Args[i:i+1+arity]...)
		}
		i += arity
	}
	s.fixed = joinWords(fixed)
	return s
}

// splitAddress reads "ip:port" or "[ipv6]:port"; names, prefixes (unix@, ipv4@),
// port ranges and offsets cannot be set at runtime.
func splitAddress(addr string) (string, int, error) {
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

// balance is the backend's load-balancing algorithm, inherited from defaults when
// the backend has none.
func (b backendContext) balance() string {
	for _, s := range append([]*Section{b.section}, b.defaults...) {
		algo := ""
		for _, d := range s.Directives {
			if d.Keyword == "balance" && len(d.Args) > 0 {
				algo = d.Args[0]
			}
		}
		if algo != "" {
			return algo
		}
	}
	return "roundrobin"
}

// defaultServerProblem says which default-server option a dynamic server would miss.
func (b backendContext) defaultServerProblem() string {
	for _, s := range append([]*Section{b.section}, b.defaults...) {
		for _, d := range s.Directives {
			if d.Keyword != "default-server" {
				continue
			}
			for i := 0; i < len(d.Args); i++ {
				arity, ok := harmlessDefaultServer[d.Args[i]]
				if !ok {
					return fmt.Sprintf("default-server option %q (in %s) is not inherited by dynamic servers", d.Args[i], s.Title())
				}
				i += arity
			}
		}
	}
	return ""
}

// diffServers turns server line changes into runtime operations, or into reasons.
func (p *planner) diffServers(b backendContext, old, cur []Directive) {
	title := b.section.Title()
	be := b.section.Name
	oldByName, ok1 := p.indexServers(title, old)
	newByName, ok2 := p.indexServers(title, cur)
	if !ok1 || !ok2 {
		return
	}
	// The dynamic-balance check is made once per backend and only when needed.
	balanceProblem := ""
	if algo := b.balance(); !dynamicBalance[algo] {
		balanceProblem = fmt.Sprintf("backend uses balance %s; HAProxy needs a dynamic load balancing algorithm for dynamic servers and weights", algo)
	}
	for _, d := range old {
		o := oldByName[d.Args[0]]
		if _, kept := newByName[o.name]; kept {
			continue
		}
		switch {
		case o.problem != "":
			p.reload(title, d.String(), "removed; "+o.problem)
		case !p.caps.DynamicServers:
			p.reload(title, d.String(), "removed; del server needs HAProxy 2.6"+p.versionNote())
		case balanceProblem != "":
			p.reload(title, d.String(), "removed; "+balanceProblem)
		default:
			p.validated(phaseDelServer, be+"/"+o.name, title, d.String(),
				&runtime.DelServer{Backend: be, Server: o.name})
		}
	}
	for _, d := range cur {
		n := newByName[d.Args[0]]
		o, existed := oldByName[n.name]
		if !existed {
			p.addServer(b, n, balanceProblem)
			continue
		}
		if o.line.String() != n.line.String() {
			p.changeServer(b, o, n, balanceProblem)
		}
	}
}

// indexServers maps server names to parsed lines; duplicates and nameless lines
// are reasons.
func (p *planner) indexServers(title string, ds []Directive) (map[string]server, bool) {
	m := make(map[string]server, len(ds))
	for _, d := range ds {
		if len(d.Args) == 0 {
			p.reload(title, d.String(), "server line without a name")
			return nil, false
		}
		if _, dup := m[d.Args[0]]; dup {
			p.reload(title, d.String(), "duplicate server name")
			return nil, false
		}
		m[d.Args[0]] = parseServer(d)
	}
	return m, true
}

func (p *planner) addServer(b backendContext, n server, balanceProblem string) {
	title, line := b.section.Title(), n.line.String()
	problem := n.problem
	switch {
	case problem != "":
	case !p.caps.DynamicServers:
		problem = "add server needs HAProxy 2.6" + p.versionNote()
	case balanceProblem != "":
		problem = balanceProblem
	case !n.addable:
		problem = "option not expressible by add server (only check, weight, disabled)"
	case n.weighted && n.weight == 0:
		problem = "weight 0 not expressible by add server"
	default:
		problem = b.defaultServerProblem()
	}
	if problem != "" {
		p.reload(title, line, "added; "+problem)
		return
	}
	op := &runtime.AddServer{Backend: b.section.Name, Server: n.name, Address: n.address, Port: n.port,
		Check: n.check, Disabled: n.disabled}
	if n.weighted {
		op.Weight = n.weight
	}
	p.validated(phaseAddServer, b.section.Name+"/"+n.name, title, line, op)
}

func (p *planner) changeServer(b backendContext, o, n server, balanceProblem string) {
	title, line := b.section.Title(), n.line.String()
	be, key := b.section.Name, b.section.Name+"/"+n.name
	switch {
	case o.problem != "":
		p.reload(title, line, "changed from "+o.line.String()+"; "+o.problem)
		return
	case n.problem != "":
		p.reload(title, line, "changed from "+o.line.String()+"; "+n.problem)
		return
	case o.fixed != n.fixed:
		p.reload(title, line, "changed from "+o.line.String()+"; only address, port, weight and disabled change at runtime")
		return
	case o.weight != n.weight && balanceProblem != "":
		p.reload(title, line, "weight changed; "+balanceProblem)
		return
	}
	if o.address != n.address || o.port != n.port {
		p.validated(phaseSetAddr, key, title, line,
			&runtime.SetServerAddr{Backend: be, Server: n.name, Address: n.address, Port: n.port})
	}
	if o.weight != n.weight {
		// Weight 0 takes a server out of rotation, like maintenance: after map deletes.
		phase := phaseSetWeight
		if n.weight == 0 {
			phase = phaseDisable
		}
		p.validated(phase, key, title, line,
			&runtime.SetServerWeight{Backend: be, Server: n.name, Weight: n.weight})
	}
	if o.disabled != n.disabled {
		state, phase := "ready", phaseEnable
		if n.disabled {
			state, phase = "maint", phaseDisable
		}
		p.validated(phase, key, title, line, &runtime.SetServerState{Backend: be, Server: n.name, State: state})
	}
}
