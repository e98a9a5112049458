package plan

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// Capabilities are the runtime features of the HAProxy a plan is made for.
type Capabilities struct {
	// Version is the HAProxy version string; it only appears in reasons.
	Version string
	// AddBackend: `add backend` exists (3.4+).
	AddBackend bool
	// DynamicServers: `add server` / `del server` (2.6+).
	DynamicServers bool
	// RuntimeMaps: add/set/del map and prepare/commit map.
	RuntimeMaps bool
	// SSLRuntime: new/set/commit ssl cert and crt-list edits.
	SSLRuntime bool
	// SSLCAFiles: set/commit ssl ca-file (2.5+).
	SSLCAFiles bool
}

// CapabilitiesFor turns a version string into the capabilities the runtime package
// knows it offers.
func CapabilitiesFor(version string) (Capabilities, error) {
	v, err := runtime.ParseVersion(version)
	if err != nil {
		return Capabilities{}, fmt.Errorf("capabilities: %w", err)
	}
	c := runtime.CapabilitiesOf(v)
	return Capabilities{Version: version, AddBackend: c.AddBackend, DynamicServers: c.DynamicServers,
		RuntimeMaps: c.RuntimeMaps, SSLRuntime: c.SSLRuntime, SSLCAFiles: v.AtLeast(2, 5)}, nil
}

// Reason names one difference that needs a reload.
type Reason struct {
	// Section is the haproxy.cfg section ("backend be_a") or the file ("map:host.map").
	Section string `json:"section"`
	// Directive is the directive or entry concerned, in canonical form; may be empty.
	Directive string `json:"directive,omitempty"`
	// Detail says what happened: "added", "removed", "changed from …", or why the
	// runtime cannot do it.
	Detail string `json:"detail"`
}

func (r Reason) String() string {
	s := r.Section
	if r.Directive != "" {
		s += ": " + r.Directive
	}
	return s + ": " + r.Detail
}

// Result is what it takes to go from the running bundle to the desired one.
type Result struct {
	// Ops are the runtime operations, in a safe order. Empty when Reload is true:
	// a reload applies the whole desired bundle at once.
	Ops []runtime.Op `json:"ops,omitempty"`
	// Reload is true when some difference cannot be applied at runtime.
	Reload bool `json:"reload"`
	// Reasons name every difference that needs the reload (empty without reload).
	Reasons []Reason `json:"reasons,omitempty"`
	// Files are the desired files that differ from the running ones and that Ops
	// make true (or whose differences do not matter to HAProxy, such as comments):
	// the agent writes them after applying Ops so that disk equals what runs.
	// Empty when Reload is true (the whole bundle is written for the reload).
	Files []bundle.File `json:"files,omitempty"`
	// Running is what the pod runs once Ops and Files are applied (nil with Reload):
	// the files it will have on disk — new backends under the spare backends that
	// serve them, map entries pointing there — and the aliases the next Plan needs.
	Running *Running `json:"-"`
}

// Op phases: the order in which runtime operations are safe to apply. New servers
// are up before any map entry can point at them; map entries are gone before the
// servers they pointed at are taken down.
const (
	phaseAddServer = iota
	phaseSetAddr
	phaseSetWeight
	phaseEnable
	phaseMapWrite // add-map, set-map, replace-map
	phaseMapDelete
	phaseDisable // maint or drain
	phaseDelServer
)

type plannedOp struct {
	phase int
	sort  string // backend/server or map\x00key: a stable order within the phase
	op    runtime.Operation
}

// planner accumulates one Plan call.
type planner struct {
	caps    Capabilities
	ops     []plannedOp
	reasons []Reason
	files   []bundle.File
	ssl     func() sslPaths          // certificate and crt-list paths, collected on first use
	stored  func() map[string]string // files in HAProxy's store and their keyword (storedFiles), on first use
	edit    *serverEdit              // the desired haproxy.cfg is the running one with a backend's servers edited
}

func (p *planner) reload(section, directive, detail string) {
	p.reasons = append(p.reasons, Reason{Section: section, Directive: directive, Detail: detail})
}

func (p *planner) add(phase int, sortKey string, op runtime.Operation) {
	p.ops = append(p.ops, plannedOp{phase: phase, sort: sortKey, op: op})
}

// Plan compares what runs with what is desired and returns the runtime operations
// that bring HAProxy there, or a reload with the reasons it is needed. It is pure:
// no I/O, and the same input always gives the same output.
func Plan(running Running, desired *bundle.Bundle, caps Capabilities) Result {
	p := &planner{caps: caps}
	switch {
	case desired == nil:
		return Result{}
	case running.Bundle == nil:
		p.reload("(bundle)", "", "nothing is running yet")
		return p.result()
	case running.Bundle.Hash != "" && running.Bundle.Hash == desired.Hash:
		return Result{Running: &Running{Bundle: running.Bundle}} // the pod runs the desired names
	}
	runFiles := indexFiles(running.Bundle)
	wantFiles := indexFiles(desired)

	// Where new backends run (pool) and which removed ones stay: the desired files
	// become the files that will run on this pod.
	var wantCfg, runCfg *config.Config
	var wantErr, runErr error
	wantParsed, runParsed := false, false
	aliases := map[string]string{}
	runCfgFile, hasRunCfg := runFiles["haproxy.cfg"]
	wantCfgFile, hasWantCfg := wantFiles["haproxy.cfg"]
	// A haproxy.cfg whose difference is whole comment lines (a route's note) has
	// nothing to place: parsing it (three times, per pod) was most of a route's plan.
	sameCfg := hasRunCfg && hasWantCfg && len(running.Aliases) == 0 && sameWithoutCommentLines(runCfgFile.Content, wantCfgFile.Content)
	if hasRunCfg && hasWantCfg && !sameCfg && (!runCfgFile.Content.Equal(wantCfgFile.Content) || len(running.Aliases) > 0) {
		runText, desired := runCfgFile.Content, wantCfgFile.Content
		runCfg, runErr = parsedConfigs.ran(runText)
		runParsed = true
		// One backend's servers edited, no backend renamed (placement then keeps
		// the edit as it is): the desired parse is the running one's, but a section.
		var e serverEdit
		edited := false
		if runErr == nil && len(running.Aliases) == 0 {
			e, edited = editOfServers(runCfg, runText, desired)
		}
		if edited {
			p.edit, wantCfg = &e, parsedConfigs.keep(configParse{text: desired, cfg: e.want}).cfg
			parsedConfigs.planned(runText, desired, desired)
		} else {
			wantCfg, wantErr = parsedConfigs.parse(desired)
		}
		if p.edit == nil && runErr == nil && wantErr == nil {
			pl := place(runCfg, runText.String(), wantCfg, desired.String(), running.Aliases)
			aliases = pl.aliases
			placed := desired
			if pl.text != desired.String() {
				// (hashed around what placing changed: the rest has the desired file's chunks)
				placed = bundle.TextOf(pl.text)
				wantCfgFile.Content, wantCfgFile.Hash = placed, bundle.HashEdited(desired, placed)
				wantFiles["haproxy.cfg"] = wantCfgFile
				wantCfg, wantErr = parsedConfigs.parse(placed, runText)
			}
			parsedConfigs.planned(runText, desired, placed)
		}
		wantParsed = true
	}
	for t, f := range wantFiles {
		if f.Kind == bundle.KindMap && len(aliases) > 0 {
			f.Content, f.Hash = translatedMaps.translate(f.Name, f.Content, aliases)
			wantFiles[t] = f
		}
	}

	targets := make([]string, 0, len(runFiles)+len(wantFiles))
	for t := range runFiles {
		targets = append(targets, t)
	}
	for t := range wantFiles {
		if _, ok := runFiles[t]; !ok {
			targets = append(targets, t)
		}
	}
	sort.Strings(targets)

	wantText := wantFiles["haproxy.cfg"].Content
	// Parsed on first use: a map-only change needs the desired config at most (to
	// see how a map is matched), an unchanged config not at all.
	desiredConfig := func() (*config.Config, error) {
		if !wantParsed {
			wantCfg, wantErr = parsedConfigs.parse(wantFiles["haproxy.cfg"].Content)
			wantParsed = true
		}
		return wantCfg, wantErr
	}
	// The running config, parsed once: placement, the config diff, certificate
	// paths and the files in HAProxy's store all read it.
	runningConfig := func() (*config.Config, error) {
		if !runParsed {
			runCfg, runErr = parsedConfigs.ran(runFiles["haproxy.cfg"].Content)
			runParsed = true
		}
		return runCfg, runErr
	}
	p.ssl = sync.OnceValue(func() sslPaths {
		runCfg, _ := runningConfig()
		want, _ := desiredConfig()
		var lists []string
		for _, fs := range []map[string]bundle.File{runFiles, wantFiles} {
			for _, f := range fs {
				if f.Kind == bundle.KindCrtList {
					lists = append(lists, f.Content.String())
				}
			}
		}
		return collectSSLPaths([]*config.Config{want, runCfg}, lists)
	})
	p.stored = sync.OnceValue(func() map[string]string {
		runCfg, _ := runningConfig()
		return storedFiles(runCfg)
	})
	var kept []bundle.File // removed certificates stay in HAProxy's store until a reload
	for _, t := range targets {
		old, hadOld := runFiles[t]
		cur, hasNew := wantFiles[t]
		switch {
		case hadOld && hasNew && old.Content.Equal(cur.Content):
		case !hasNew && old.Kind == bundle.KindCert && p.caps.SSLRuntime:
			kept = append(kept, old)
		case !hasNew:
			p.reload(t, "", "file removed"+fileKindNote(old.Kind))
		case !hadOld && cur.Kind == bundle.KindCert:
			p.certChanged(cur, true)
		case !hadOld:
			p.reload(t, "", "file added"+fileKindNote(cur.Kind))
		default:
			p.diffFile(old, cur, runningConfig, desiredConfig, wantText)
		}
	}
	res := p.result()
	if !res.Reload {
		files := make([]bundle.File, 0, len(wantFiles)+len(kept))
		for _, t := range sortedKeys(wantFiles) {
			files = append(files, wantFiles[t])
		}
		files = append(files, kept...)
		if len(aliases) == 0 {
			aliases = nil
		}
		// every file's hash is its content's: the desired bundle's, the running one's,
		// or set above where plan rewrote the content
		res.Running = &Running{Bundle: bundle.Assemble(files), Aliases: aliases}
	}
	return res
}

// diffFile plans one file present on both sides with different content.
func (p *planner) diffFile(old, cur bundle.File, runningConfig, desiredConfig func() (*config.Config, error), wantText bundle.Text) {
	switch cur.Kind {
	case bundle.KindConfig:
		if sameWithoutCommentLines(old.Content, cur.Content) {
			p.files = append(p.files, cur) // comment lines only: nothing for HAProxy
			return
		}
		runCfg, runErr := runningConfig() // old is the running haproxy.cfg
		desired, desiredErr := desiredConfig()
		switch {
		case runErr != nil:
			p.reload(cur.Target(), "", "running: "+runErr.Error())
		case desiredErr != nil:
			p.reload(cur.Target(), "", "desired: "+desiredErr.Error())
		default:
			p.diffConfig(runCfg, desired)
			p.files = append(p.files, cur)
		}
	case bundle.KindMap:
		p.diffMap(old, cur, wantText)
		p.files = append(p.files, cur)
	case bundle.KindCert:
		p.certChanged(cur, false)
	case bundle.KindCrtList:
		p.diffCrtList(old, cur)
	case bundle.KindFile:
		p.caFileChanged(cur)
	default:
		p.reload(cur.Target(), "", "file content changed")
	}
}

// fileKindNote explains why adding or removing a file of this kind reloads.
func fileKindNote(k bundle.Kind) string {
	if k == bundle.KindMap {
		return " (HAProxy opens map files when it parses the configuration)"
	}
	return ""
}

func indexFiles(b *bundle.Bundle) map[string]bundle.File {
	m := make(map[string]bundle.File, len(b.Files))
	for _, f := range b.Files {
		m[f.Target()] = f
	}
	return m
}

// result turns the accumulated state into a Result: a reload drops the operations,
// otherwise operations are ordered by phase, then by backend/server or map/key.
func (p *planner) result() Result {
	if len(p.reasons) > 0 {
		sort.SliceStable(p.reasons, func(i, j int) bool {
			a, b := p.reasons[i], p.reasons[j]
			if a.Section != b.Section {
				return a.Section < b.Section
			}
			if a.Directive != b.Directive {
				return a.Directive < b.Directive
			}
			return a.Detail < b.Detail
		})
		return Result{Reload: true, Reasons: p.reasons}
	}
	sort.SliceStable(p.ops, func(i, j int) bool {
		if p.ops[i].phase != p.ops[j].phase {
			return p.ops[i].phase < p.ops[j].phase
		}
		return p.ops[i].sort < p.ops[j].sort
	})
	res := Result{Files: p.files}
	for _, o := range p.ops {
		res.Ops = append(res.Ops, runtime.Op{Operation: o.op})
	}
	sort.SliceStable(res.Files, func(i, j int) bool { return res.Files[i].Target() < res.Files[j].Target() })
	return res
}

// validated adds op unless it fails the runtime package's own checks, in which case
// the difference needs a reload instead.
func (p *planner) validated(phase int, sortKey, section, directive string, op runtime.Operation) bool {
	if err := op.Validate(); err != nil {
		p.reload(section, directive, "not expressible at runtime: "+err.Error())
		return false
	}
	p.add(phase, sortKey, op)
	return true
}

// versionNote is " (running <version>)" when the version is known.
func (p *planner) versionNote() string {
	if strings.TrimSpace(p.caps.Version) == "" {
		return ""
	}
	return " (running " + p.caps.Version + ")"
}
