package plan

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// editConfigLines is a configuration with defaults (one named, one inheriting from
// it), a frontend, backends that inherit either, and servers with options.
func editConfigLines(rng *rand.Rand, backends int) []string {
	lines := []string{"global", "    maxconn 100", "defaults", "    mode http", "    timeout connect 5s",
		"defaults tuned from unnamed", "    timeout server 30s", "frontend fe", "    bind :80",
		"    use_backend %[req.hdr(host),lower,map(/etc/haproxy/maps/host.map)]"}
	lines[5] = "defaults tuned"
	for b := range backends {
		header := fmt.Sprintf("backend be_%03d", b)
		if b%3 == 0 {
			header += " from tuned"
		}
		lines = append(lines, header, "    balance roundrobin")
		if b%4 == 0 {
			lines = append(lines, "    # haptic: a note")
		}
		for s := range 1 + rng.IntN(3) {
			lines = append(lines, serverLine(rng, b, s))
		}
	}
	return append(lines, "listen stats", "    bind :8404", "    server s1 127.0.0.1:9000")
}

func serverLine(rng *rand.Rand, b, s int) string {
	opts := []string{" check", " check weight 10", " check maxconn 50", "", " check inter 2s"}
	return fmt.Sprintf("    server srv_%d_%d 10.%d.%d.%d:%d%s", b, s, b/250, b%250, s+rng.IntN(3), 8080+rng.IntN(2), opts[rng.IntN(len(opts))])
}

// TestServerEditsPlanAsAWholeParse: plans of edits that change only server lines
// of a backend, every line kept where it was, are the plans a parse of the whole
// desired configuration gives (the same runtime operations, reasons, files and
// running set), over chains of random edits; edits of other kinds (a directive, a
// section header, a line added) fall back to the whole parse.
func TestServerEditsPlanAsAWholeParse(t *testing.T) {
	defer func(on bool) { serverEdits = on }(serverEdits)
	rng := rand.New(rand.NewPCG(21, 22))
	bundleOf := func(lines []string) *bundle.Bundle {
		// (whole or in pieces: the plan reads a bundle.Text either way)
		return bundle.New([]bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: textIn(rng, strings.Join(lines, "\n")+"\n")}})
	}
	planOf := func(running Running, desired *bundle.Bundle, fast bool) (Result, string) {
		parsedConfigs = &configParses{} // (neither plan sees the other's parses)
		serverEdits = fast
		return planned(t, running, desired)
	}
	fast, ops := 0, 0
	for chain := range 20 {
		lines := editConfigLines(rng, 20+rng.IntN(200))
		running := Running{Bundle: bundleOf(lines)}
		for step := range 30 {
			next := append([]string(nil), lines...)
			var servers []int
			for i, l := range next {
				if strings.HasPrefix(l, "    server ") {
					servers = append(servers, i)
				}
			}
			at := servers[rng.IntN(len(servers))]
			kind := rng.IntN(10)
			switch {
			case kind < 6: // a server's address, port or options
				next[at] = serverLine(rng, at, step)
			case kind == 6: // a server gone, a note in its place
				next[at] = "    # haptic: gone"
			case kind == 7: // a directive
				next[at-1] = "    balance leastconn"
			case kind == 8 && step%2 == 0: // a server added: the lines after it move
				next = append(next[:at+1], append([]string{serverLine(rng, at, 99)}, next[at+1:]...)...)
			case kind == 8: // a server removed
				next = append(next[:at], next[at+1:]...)
			default: // two servers, in two backends
				next[at] = serverLine(rng, at, step)
				other := servers[rng.IntN(len(servers))]
				next[other] = serverLine(rng, other, step+1)
			}
			desired := bundleOf(next)
			slow, slowText := planOf(running, desired, false)
			_, fastText := planOf(running, desired, true)
			if slowText != fastText {
				t.Fatalf("chain %d step %d (edit %d at line %d): plans differ\nwhole parse: %s\nserver edit: %s", chain, step, kind, at+1, slowText, fastText)
			}
			runText := running.Bundle.Config().Content.String()
			runCfg, err := (&configParses{}).parse(bundle.TextOf(runText))
			if err != nil {
				t.Fatal(err)
			}
			e, ok := editOfServers(runCfg, bundle.TextOf(runText), bundle.TextOf(desired.Config().Content.String()))
			if (kind < 7 || kind == 8) && !ok || kind == 7 && ok { // (two servers may be in one backend)
				t.Fatalf("chain %d step %d: edit %d taken as a server edit: %v", chain, step, kind, ok)
			}
			if ok {
				fast++
				// the derived parse is the desired text's parse, line numbers and all
				whole, err := config.Parse(desired.Config().Content.String())
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(e.want.Flat(), whole) {
					t.Fatalf("chain %d step %d: edit %d: the derived parse differs from the desired text's", chain, step, kind)
				}
			}
			if slow.Running != nil {
				running, lines = *slow.Running, next
				if len(slow.Ops) > 0 {
					ops++
				}
			}
		}
	}
	if fast < 300 || ops < 200 {
		t.Fatalf("only %d server edits, %d plans with runtime operations", fast, ops)
	}
}

// TestEditOfServersTakesOnlyServerLines: the shortcut takes an edit of server lines
// in one backend and gives the desired configuration's sections (those after a
// removed line moved up); it declines a changed directive, a server line in a
// frontend and a new section.
func TestEditOfServersTakesOnlyServerLines(t *testing.T) {
	run := "global\ndefaults\nfrontend fe\n    bind :80\nbackend a\n    server s1 10.0.0.1:80\nbackend b\n    balance roundrobin\n    server s1 10.0.0.2:80 check\n    server s2 10.0.0.3:80\n"
	runCfg, err := parsedConfigs.parse(bundle.TextOf(run))
	if err != nil {
		t.Fatal(err)
	}
	took := strings.Replace(run, "10.0.0.3:80", "10.0.0.9:8080 check", 1)
	e, ok := editOfServers(runCfg, bundle.TextOf(run), bundle.TextOf(took))
	if !ok || e.at != 4 || e.want.Sections[4].Directives[2].Args[1] != "10.0.0.9:8080" || e.want.DirectiveLine(4, e.want.Sections[4].Directives[2]) != 10 ||
		e.want.Sections[3] != runCfg.Sections[3] {
		t.Fatalf("server edit of backend b: %v %+v", ok, e)
	}
	gone := strings.Replace(run, "    server s1 10.0.0.1:80\n", "", 1) // backend a's server removed
	e, ok = editOfServers(runCfg, bundle.TextOf(run), bundle.TextOf(gone))
	if b := e.want.Sections[4]; !ok || e.at != 3 || len(e.want.Sections[3].Directives) != 0 || e.want.SectionLine(4) != 6 ||
		e.want.DirectiveLine(4, b.Directives[2]) != 9 || b.Directives[2].Args[1] != "10.0.0.3:80" || runCfg.SectionLine(4) != 7 {
		t.Fatalf("server removed from backend a: %v %+v", ok, e)
	}
	for name, want := range map[string]string{
		"directive": strings.Replace(run, "roundrobin", "leastconn", 1),
		"frontend":  strings.Replace(run, "    bind :80\n", "    server x 10.0.0.4:80\n", 1),
		"section":   strings.Replace(run, "backend b\n", "backend a2\n    server y 10.0.0.5:80\nbackend b\n", 1),
	} {
		if _, ok := editOfServers(runCfg, bundle.TextOf(run), bundle.TextOf(want)); ok {
			t.Errorf("%s: taken as a server edit", name)
		}
	}
}

// TestSameWithoutCommentLinesReadsTheMiddle: over random edits of large texts (lines
// and comment lines changed, added, removed), sameWithoutCommentLines, which reads
// only the lines between those the two share at their ends, answers as a compare
// of the whole texts without their comment lines.
func TestSameWithoutCommentLinesReadsTheMiddle(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	pick := []string{"    server s 10.0.0.1:80", "    # haptic: a note", "backend b", "  # another", "    balance roundrobin", ""}
	same := 0
	for range 300 {
		var lines []string
		for range 2000 + rng.IntN(2000) {
			lines = append(lines, pick[rng.IntN(len(pick))])
		}
		next := append([]string(nil), lines...)
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(next))
			switch rng.IntN(3) {
			case 0:
				next[at] = pick[rng.IntN(len(pick))]
			case 1:
				next = append(next[:at], next[at+1:]...)
			default:
				next = append(next[:at], append([]string{pick[rng.IntN(len(pick))]}, next[at:]...)...)
			}
		}
		a, b := strings.Join(lines, "\n")+"\n", strings.Join(next, "\n")+"\n"
		want := withoutCommentLines(a) == withoutCommentLines(b)
		if got := sameWithoutCommentLines(bundle.TextOf(a), bundle.TextOf(b)); got != want {
			t.Fatalf("sameWithoutCommentLines = %v, want %v", got, want)
		}
		if want {
			same++
		}
	}
	if same < 30 {
		t.Fatalf("only %d edits were of comment lines alone", same)
	}
}

// planned is Plan(running, desired) and the plan as text, with the running set's hash
// and aliases: what tests comparing two ways of planning compare.
func planned(t *testing.T, running Running, desired *bundle.Bundle) (Result, string) {
	t.Helper()
	res := Plan(running, desired, caps26)
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if res.Running != nil {
		out = fmt.Appendf(out, " running %s %v", res.Running.Bundle.Hash, res.Running.Aliases)
	}
	return res, string(out)
}

// withoutCommentLines (the reference sameWithoutCommentLines is checked against) is
// text without the lines whose first non-blank character is '#' (HAProxy ignores
// such a line whole).
func withoutCommentLines(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "#") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
