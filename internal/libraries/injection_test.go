package libraries

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
	"github.com/haproxy-haptic/haptic/internal/pipeline"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

// TestInjectionProof is the property the output writers, the rendered-output check
// and the store's screen give together: whatever string an object holds in any field
// the default libraries read, it never adds a directive, a section or a map entry,
// and the bundle passes `haproxy -c` — or the object is left out with a reason.
//
// Every string field of every fixture object of a set of validation tests that
// covers every watched kind (Ingress with all annotations and TLS, IngressClass,
// Service, EndpointSlice, Secret, Gateway with TLS listeners, ListenerSet, HTTPRoute with every
// match and filter, GRPCRoute, ReferenceGrant, Namespace) gets each hostile value.
// Each value carries the token "inj3ct" so that, if the value were split anywhere,
// the token would stand alone: as a word of a configuration line, a map key or a
// map value. The test asserts that it never does, that no map gains lines and no
// section kind gains sections over the benign render, and that haproxy -c accepts
// every accepted bundle.
//
// It renders thousands of bundles, so `make test` runs it without the race detector.
func TestInjectionProof(t *testing.T) {
	requireHAProxy(t)
	p := load(t)
	tests := []string{
		"annotation-all-valid", "annotation-auth-basic", "annotation-backend-per-settings", "tls-basic",
		"ingress-default-backend", "ingress-path-types", "ingress-class-filtering",
		"gateway-header-query-method-matches", "gateway-filters-header-modifiers", "gateway-filter-redirect",
		"gateway-filter-url-rewrite", "gateway-weighted-backends", "gateway-backendref-header-modifiers",
		"gateway-cross-namespace-with-grant", "gateway-tls-terminate", "gateway-grpc-route", "gateway-cors",
		"gateway-timeouts", "gateway-listener-isolation", "gateway-allowed-routes", "gateway-listenerset",
		"gateway-backend-tls-policy", "gateway-tlsroute-mixed",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	checker := &validate.Checker{Layout: p.Layout}
	type job struct {
		what, res string
		words     bool // the field's format is several words: the token may stand alone
		obj       map[string]any
		raw       map[string][]map[string]any
		extra     map[string]any
		benign    shape
	}
	var jobs []job
	seenField := map[string]bool{}
	fields := 0
	for _, name := range tests {
		tc, ok := p.Config.Spec.ValidationTests[name]
		if !ok {
			t.Fatalf("validation test %s is gone: pick another that covers its fields", name)
		}
		tc = validate.MergeGlobal(p.Config.Spec.ValidationTests["_global"], tc)
		base, extra := decodeFixtures(t, name, tc)
		benign, err := renderRaw(ctx, p, base, extra)
		if err != nil {
			t.Fatalf("%s: the benign fixtures do not render: %v", name, err)
		}
		benignShape := shapeOf(benign.Bundle)
		for _, res := range sortedResources(base) {
			for i := range base[res] {
				for _, leaf := range stringLeaves(base[res][i], "") {
					class := res + " " + stripIndices(leaf)
					if seenField[class] || leaf == "apiVersion" || leaf == "kind" {
						continue
					}
					seenField[class] = true
					fields++
					for _, hostile := range hostileValues() {
						raw := cloneRaw(base)
						setLeaf(raw[res][i], leaf, hostile)
						jobs = append(jobs, job{what: fmt.Sprintf("%s: %s[%d].%s = %.40q", name, res, i, leaf, hostile),
							res: res, words: severalWords(leaf), obj: raw[res][i], raw: raw, extra: extra, benign: benignShape})
					}
				}
			}
		}
	}
	var checks checkQueue
	var mu sync.Mutex
	leftOut := 0
	work := make(chan job)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range work {
				out, err := renderRaw(ctx, p, j.raw, j.extra)
				mu.Lock()
				switch {
				case err != nil:
					t.Errorf("%s: the render failed instead of leaving the object out: %v", j.what, err)
				case objectLeftOut(out, j.res, j.obj):
					leftOut++
				default:
					if err := injected(out.Bundle, j.benign, !j.words); err != nil {
						t.Errorf("%s: %v", j.what, err)
					} else {
						checks.add(out.Bundle, j.what)
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	mutations := len(jobs)
	failures := checks.run(ctx, checker)
	for _, f := range failures {
		t.Error(f)
	}
	t.Logf("%d fields, %d hostile values, %d left out with a reason, %d distinct accepted bundles passed haproxy -c",
		fields, mutations, leftOut, len(checks.bundles)-len(failures))
	if fields < 100 {
		t.Fatalf("only %d fields covered", fields)
	}
}

// hostileValues try every way of ending a word, a line, a map key or a runtime
// command, and the limits HAProxy has.
func hostileValues() []string {
	const tok = "inj3ct"
	return []string{
		"x\nfrontend " + tok,
		"x\r\nbackend " + tok,
		"x\x00" + tok + " " + tok,
		tok + " " + tok,
		"x\t" + tok,
		`x" ` + tok + ` "`,
		"x' " + tok + " '",
		`x\ ` + tok,
		`\x0a` + tok,
		"# " + tok,
		"x;" + tok,
		"$HOME " + tok,
		"${HOME} " + tok,
		"%[env(HOME)] " + tok,
		"ünïcødé " + tok,
		tok + "<<",
		strings.Repeat("a", 16400) + " " + tok,
		strings.Repeat("w ", 70) + tok,
	}
}

func decodeFixtures(t *testing.T, name string, vt v1alpha1.ValidationTest) (map[string][]map[string]any, map[string]any) {
	t.Helper()
	raw := map[string][]map[string]any{}
	for res, objs := range vt.Fixtures {
		for _, o := range objs {
			var m map[string]any
			if err := json.Unmarshal(o.Raw, &m); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			raw[res] = append(raw[res], m)
		}
	}
	extra := map[string]any{}
	if vt.ExtraContext != nil {
		var err error
		if extra, err = render.ExtraContext(vt.ExtraContext.Raw); err != nil {
			t.Fatal(err)
		}
	}
	return raw, extra
}

func renderRaw(ctx context.Context, p *pipeline.Pipeline, raw map[string][]map[string]any, extra map[string]any) (*render.Result, error) {
	snap, err := p.Builder.Snapshot(cloneRaw(raw))
	if err != nil {
		return nil, err
	}
	return p.RenderInput(ctx, render.Input{Snapshot: snap, ExtraContext: extra, LeaveOut: true})
}

func objectLeftOut(res *render.Result, resource string, obj map[string]any) bool {
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	key := name
	if ns != "" {
		key = ns + "/" + name
	}
	for _, l := range res.LeftOut {
		if l.Resource == resource && (l.Key == key || key == "") && l.Reason != "" {
			return true
		}
	}
	return false
}

// shape is what an injection would add to: sections per kind, lines per map file.
type shape struct {
	sections map[string]int
	mapLines map[string]int
}

func shapeOf(b *bundle.Bundle) shape {
	s := shape{sections: map[string]int{}, mapLines: map[string]int{}}
	for _, f := range b.Files {
		switch f.Kind {
		case bundle.KindConfig:
			for _, line := range strings.Split(f.Content.String(), "\n") {
				if line != "" && line[0] != ' ' && line[0] != '#' {
					words, _ := config.Words(line)
					if len(words) > 0 {
						s.sections[words[0]]++
					}
				}
			}
		case bundle.KindMap:
			for _, line := range strings.Split(f.Content.String(), "\n") {
				if _, _, ok := config.SplitMapLine(line); ok {
					s.mapLines[f.Name]++
				}
			}
		}
	}
	return s
}

// severalWords: annotations whose value is "<header name> <value>", where the token
// standing alone as the header name or value is the format, not an injection.
func severalWords(leaf string) bool {
	return strings.HasSuffix(leaf, `request-set-header"]`) || strings.HasSuffix(leaf, `response-set-header"]`)
}

// injected finds the token standing alone (with tokens), or more structure than the
// benign render.
func injected(b *bundle.Bundle, benign shape, tokens bool) error {
	const tok = "inj3ct"
	for _, f := range b.Files {
		if !tokens {
			break
		}
		switch f.Kind {
		case bundle.KindConfig, bundle.KindCrtList:
			for n, line := range strings.Split(f.Content.String(), "\n") {
				words, err := config.Words(line)
				if err != nil {
					return fmt.Errorf("%s line %d: %v", f.Target(), n+1, err)
				}
				for _, w := range words {
					if w == tok || strings.HasPrefix(w, tok+"_") {
						return fmt.Errorf("%s line %d: the token became a word of its own: %.120q", f.Target(), n+1, line)
					}
				}
			}
		case bundle.KindMap:
			for n, line := range strings.Split(f.Content.String(), "\n") {
				k, v, ok := config.SplitMapLine(line)
				if ok && (k == tok || v == tok || strings.HasPrefix(k, tok+" ")) {
					return fmt.Errorf("%s line %d: the token became a map key or value: %.120q", f.Target(), n+1, line)
				}
			}
		}
	}
	got := shapeOf(b)
	for kind, n := range got.sections {
		if n > benign.sections[kind] {
			return fmt.Errorf("%d %s sections, %d in the benign render", n, kind, benign.sections[kind])
		}
	}
	for m, n := range got.mapLines {
		if n > benign.mapLines[m] {
			return fmt.Errorf("%s has %d lines, %d in the benign render", m, n, benign.mapLines[m])
		}
	}
	return nil
}

// checkQueue runs haproxy -c once per distinct bundle, on every core.
type checkQueue struct {
	bundles []*bundle.Bundle
	what    []string
	seen    map[string]bool
}

func (q *checkQueue) add(b *bundle.Bundle, what string) {
	if q.seen == nil {
		q.seen = map[string]bool{}
	}
	if q.seen[b.Hash] {
		return
	}
	q.seen[b.Hash] = true
	q.bundles = append(q.bundles, b)
	q.what = append(q.what, what)
}

func (q *checkQueue) run(ctx context.Context, c *validate.Checker) []string {
	var mu sync.Mutex
	var failures []string
	work := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := c.Check(ctx, q.bundles[i]); err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: haproxy -c: %v", q.what[i], err))
					mu.Unlock()
				}
			}
		}()
	}
	for i := range q.bundles {
		work <- i
	}
	close(work)
	wg.Wait()
	sort.Strings(failures)
	return failures
}

func sortedResources(m map[string][]map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// stringLeaves lists the paths of every string in v: a.b[2].c; map keys with dots
// are written in brackets, a["k.x"].
func stringLeaves(v any, path string) []string {
	var out []string
	switch x := v.(type) {
	case string:
		out = append(out, path)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, stringLeaves(x[k], joinLeaf(path, k))...)
		}
	case []any:
		for i, e := range x {
			out = append(out, stringLeaves(e, path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return out
}

func joinLeaf(path, key string) string {
	if strings.ContainsAny(key, ".[]") {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func stripIndices(path string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '[' && i+1 < len(path) && path[i+1] != '"':
			depth++
			b.WriteString("[]")
		case path[i] == ']' && depth > 0:
			depth--
		case depth > 0:
		default:
			b.WriteByte(path[i])
		}
	}
	return b.String()
}

// setLeaf sets the string at a path made by stringLeaves.
func setLeaf(obj map[string]any, path, value string) {
	var cur any = obj
	for path != "" {
		var key string
		idx := -1
		switch {
		case strings.HasPrefix(path, "[\""):
			end := strings.Index(path, "\"]")
			key, _ = strconv.Unquote(path[1 : end+1])
			path = path[end+2:]
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			idx, _ = strconv.Atoi(path[1:end])
			path = path[end+1:]
		default:
			path = strings.TrimPrefix(path, ".")
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			key, path = path[:end], path[end:]
		}
		last := path == ""
		if idx >= 0 {
			list := cur.([]any)
			if last {
				list[idx] = value
				return
			}
			cur = list[idx]
			continue
		}
		m := cur.(map[string]any)
		if last {
			m[key] = value
			return
		}
		cur = m[key]
	}
}

func cloneRaw(raw map[string][]map[string]any) map[string][]map[string]any {
	data, _ := json.Marshal(raw)
	var out map[string][]map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}
