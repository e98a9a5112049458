package plan

import (
	"path"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// sslPaths maps certificate and crt-list file names to the paths HAProxy knows
// them by: the `crt`/`crt-list` bind arguments of the configs and the first field
// of each crt-list line.
type sslPaths map[string]string

func collectSSLPaths(cfgs []*config.Config, crtLists []string) sslPaths {
	p := sslPaths{}
	add := func(file string) {
		if strings.HasPrefix(file, "/") {
			if _, seen := p[path.Base(file)]; !seen {
				p[path.Base(file)] = file
			}
		}
	}
	for _, c := range cfgs {
		if c == nil {
			continue
		}
		for _, s := range c.Sections {
			for _, d := range s.Directives {
				for i := 0; i+1 < len(d.Args); i++ {
					if d.Args[i] == "crt" || d.Args[i] == "crt-list" {
						add(d.Args[i+1])
					}
				}
			}
		}
	}
	for _, text := range crtLists {
		for _, e := range parseCrtList(text) {
			add(e.cert)
		}
	}
	return p
}

// crtListEntry is one crt-list line: the certificate path, then options and SNI
// filters, canonical (single blanks).
type crtListEntry struct {
	cert string
	line string
}

func parseCrtList(text string) []crtListEntry {
	var out []crtListEntry
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		out = append(out, crtListEntry{cert: f[0], line: strings.Join(f, " ")})
	}
	return out
}

// certChanged plans a certificate whose content changed (or that is new): its
// content is replaced in HAProxy's store, before any crt-list line points at it.
// A certificate nothing references needs no operation, only its file.
func (p *planner) certChanged(f bundle.File, isNew bool) {
	if !p.caps.SSLRuntime {
		p.reload(f.Target(), "", "certificate changed; runtime SSL updates need HAProxy 2.2"+p.versionNote())
		return
	}
	p.files = append(p.files, f)
	file, ok := p.ssl()[f.Name]
	if !ok {
		return
	}
	p.validated(phaseAddServer, "ssl\x00"+file, f.Target(), "", &runtime.SetSSLCert{Path: file, PEM: f.Content.String(), New: isNew})
}

// diffCrtList plans crt-list line changes: new lines are added after their
// certificates are in the store, removed lines are deleted after map entries go.
// The first line is the bind's default certificate and a certificate on two lines
// is ambiguous for `del ssl crt-list`: both reload.
func (p *planner) diffCrtList(old, cur bundle.File) {
	section := cur.Target()
	if !p.caps.SSLRuntime {
		p.reload(section, "", "crt-list changed; runtime SSL updates need HAProxy 2.2"+p.versionNote())
		return
	}
	p.files = append(p.files, cur)
	listPath, referenced := p.ssl()[cur.Name]
	before, after := parseCrtList(old.Content.String()), parseCrtList(cur.Content.String())
	if !referenced {
		return // no bind uses it: the file is all there is
	}
	oldBy, okOld := entriesByCert(before)
	newBy, okNew := entriesByCert(after)
	switch {
	case !okOld || !okNew:
		p.reload(section, "", "a certificate is on several lines")
		return
	case len(before) > 0 && len(after) > 0 && before[0].line != after[0].line,
		len(before) == 0 || len(after) == 0:
		p.reload(section, "", "the first line (the default certificate) changed")
		return
	}
	for _, e := range before {
		if n, kept := newBy[e.cert]; kept && n.line == e.line {
			continue
		} else if kept { // options or SNI names changed: replace the line
			p.validated(phaseEnable, "crtlist\x00"+e.cert+"\x001", section, n.line, &runtime.DelCrtListEntry{CrtList: listPath, Cert: e.cert})
			p.validated(phaseEnable, "crtlist\x00"+e.cert+"\x002", section, n.line, &runtime.AddCrtListEntry{CrtList: listPath, Line: n.line})
			continue
		}
		p.validated(phaseMapDelete, "crtlist\x00"+e.cert, section, e.line, &runtime.DelCrtListEntry{CrtList: listPath, Cert: e.cert})
	}
	for _, e := range after {
		if _, existed := oldBy[e.cert]; !existed {
			p.validated(phaseEnable, "crtlist\x00"+e.cert, section, e.line, &runtime.AddCrtListEntry{CrtList: listPath, Line: e.line})
		}
	}
}

func entriesByCert(es []crtListEntry) (map[string]crtListEntry, bool) {
	m := make(map[string]crtListEntry, len(es))
	for _, e := range es {
		if _, dup := m[e.cert]; dup {
			return nil, false
		}
		m[e.cert] = e
	}
	return m, true
}

// caFileChanged plans a file whose content changed: a CA file the running
// configuration names as the ca-file of servers only is replaced in HAProxy's
// store (2.5+), which every server using it sees at once. A bind's CA file
// reloads: 2.6's commit changes what the bind verifies but not the CA names its
// certificate request lists, by which clients pick the certificate they send.
// Any other file reloads too.
func (p *planner) caFileChanged(f bundle.File) {
	if p.caps.SSLCAFiles {
		stored := p.stored()
		for _, file := range sortedKeys(stored) {
			if stored[file] == "ca-file" && path.Base(file) == f.Name {
				p.files = append(p.files, f)
				p.validated(phaseAddServer, "ca\x00"+file, f.Target(), "", &runtime.SetSSLCAFile{Path: file, PEM: f.Content.String()})
				return
			}
		}
	}
	p.reload(f.Target(), "", "file content changed")
}
