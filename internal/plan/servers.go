package plan

import (
	"fmt"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// backendContext is what server changes need to know about their backend.
type backendContext struct {
	section  *config.Section   // the desired backend or listen section
	defaults []*config.Section // the defaults it inherits from, nearest first (a defaults may itself use "from")
}

// runtimeServerOptions are the server keywords plan understands (their number of
// values is config's). Anything else on a changed server line means a reload.
var runtimeServerOptions = map[string]bool{
	"check": true, "no-check": true, "weight": true, "disabled": true, "enabled": true,
	"inter": true, "fastinter": true, "downinter": true, "fall": true, "rise": true, "maxconn": true,
	"ssl": true, "verify": true, "ca-file": true, "crt": true, "sni": true, "verifyhost": true,
	"check-sni": true, "alpn": true, "check-alpn": true, "proto": true,
}

// stateOptions are the options runtime.AddServer has fields for; the others it
// can express (runtime.AddServerOptions) go as they are in its Options. A new
// server with any other option would run differently from what the next reload
// builds.
var stateOptions = map[string]bool{"check": true, "no-check": true, "weight": true, "disabled": true, "enabled": true}

// storedFileOptions name files a dynamic server finds only in HAProxy's store:
// HAProxy 2.6's add server does not read them from disk ("unable to load").
var storedFileOptions = map[string]bool{"ca-file": true, "crt": true}

// harmlessDefaultServer are default-server options a dynamic server does not miss:
// dynamic servers do not inherit default-server, so anything else would differ.
var harmlessDefaultServer = map[string]bool{"no-check": true, "init-addr": true}

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
	fixed    string   // the options the runtime cannot change, canonical
	addable  bool     // every option is one AddServer expresses
	options  []string // the words of the options AddServer takes as they are
	stored   []string // files the options name that must be in HAProxy's store
	problem  string   // why the line cannot be handled at runtime, if it cannot
	line     config.Directive
}

func parseServer(d config.Directive) server {
	s := server{line: d, weight: 1, addable: true}
	line, err := config.ReadServer(d)
	if err != nil {
		s.problem = err.Error()
		return s
	}
	s.name = line.Name
	host, port, err := line.IPPort()
	if err != nil {
		s.problem = err.Error()
	}
	s.address, s.port = host, port
	var fixed []string
	for _, o := range line.Options {
		switch {
		case !runtimeServerOptions[o.Keyword]:
			s.problem = fmt.Sprintf("server option %q is not supported at runtime", o.Keyword)
			return s
		case o.Incomplete:
			s.problem = fmt.Sprintf("server option %q needs a value", o.Keyword)
			return s
		case stateOptions[o.Keyword]:
		case runtime.AddServerOptions[o.Keyword] == len(o.Values):
			s.options = append(append(s.options, o.Keyword), o.Values...)
			if storedFileOptions[o.Keyword] && !strings.HasPrefix(o.Values[0], "@") {
				s.stored = append(s.stored, o.Values[0])
			}
		default:
			s.addable = false
		}
		switch o.Keyword {
		case "weight":
			w, err := config.ParseWeight(o.Values[0])
			if err != nil {
				s.problem = err.Error()
				return s
			}
			s.weight, s.weighted = w, true
		case "disabled", "enabled":
			s.disabled = o.Keyword == "disabled"
		case "check", "no-check":
			s.check = o.Keyword == "check"
			fixed = append(fixed, o.Keyword)
		default:
			fixed = append(fixed, o.Keyword)
			fixed = append(fixed, o.Values...)
		}
	}
	s.fixed = config.JoinWords(fixed)
	return s
}

// balance is the backend's load-balancing algorithm, inherited from defaults when
// the backend has none.
func (b backendContext) balance() string {
	for _, s := range append([]*config.Section{b.section}, b.defaults...) {
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
	for _, s := range append([]*config.Section{b.section}, b.defaults...) {
		for _, d := range s.Directives {
			if d.Keyword != "default-server" {
				continue
			}
			for i := 0; i < len(d.Args); i++ {
				values, known := config.ServerOptionValues(d.Args[i])
				if !known || !harmlessDefaultServer[d.Args[i]] {
					return fmt.Sprintf("default-server option %q (in %s) is not inherited by dynamic servers", d.Args[i], s.Title())
				}
				i += values
			}
		}
	}
	return ""
}

// diffServers turns server line changes into runtime operations, or into reasons.
func (p *planner) diffServers(b backendContext, old, cur []config.Directive) {
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
func (p *planner) indexServers(title string, ds []config.Directive) (map[string]server, bool) {
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
		problem = "option not expressible by add server"
	case p.unstored(n.stored) != "":
		problem = p.unstored(n.stored) + " is not in the running HAProxy's store (add server does not load files)"
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
		Check: n.check, Disabled: n.disabled, Options: n.options}
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

// unstored is the first of files the running configuration names nowhere as a
// ca-file or crt (so HAProxy has not loaded it), or "".
func (p *planner) unstored(files []string) string {
	for _, f := range files {
		if _, ok := p.stored()[f]; !ok {
			return f
		}
	}
	return ""
}

// storedFiles are the ca-file and crt arguments of a configuration's directives,
// path → keyword ("bind ca-file" when a bind uses it): HAProxy loaded them into
// its store when it parsed it.
func storedFiles(c *config.Config) map[string]string {
	out := map[string]string{}
	if c == nil {
		return out
	}
	for _, s := range c.Sections {
		for _, d := range s.Directives {
			for i := 0; i+1 < len(d.Args); i++ {
				switch {
				case !storedFileOptions[d.Args[i]]:
				case d.Keyword == "bind":
					out[d.Args[i+1]] = "bind " + d.Args[i]
				case !strings.HasPrefix(out[d.Args[i+1]], "bind "):
					out[d.Args[i+1]] = d.Args[i]
				}
			}
		}
	}
	return out
}
