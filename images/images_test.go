package images

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
)

// stage is one FROM … block of a Dockerfile.
type stage struct {
	from  string   // the image reference as written
	name  string   // the name after AS, if any
	lines []string // instructions after FROM, continuation lines joined
}

// parseDockerfile returns a Dockerfile's ARGs declared before the first FROM and its stages.
func parseDockerfile(t *testing.T, path string) (globalArgs []string, stages []stage) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var logical []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || line == "" && cur.Len() == 0 {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		logical = append(logical, cur.String())
		cur.Reset()
	}
	for _, l := range logical {
		word, rest, _ := strings.Cut(l, " ")
		switch strings.ToUpper(word) {
		case "FROM":
			f := strings.Fields(rest)
			st := stage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
		case "ARG":
			if len(stages) == 0 {
				globalArgs = append(globalArgs, rest)
			}
		}
		if len(stages) > 0 && strings.ToUpper(word) != "FROM" {
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, l)
		}
	}
	return globalArgs, stages
}

// readVersions parses versions.env.
func readVersions(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("versions.env")
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, val, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("versions.env: %q is not KEY=value", l)
		}
		v[k] = val
	}
	return v
}

var (
	argRef = regexp.MustCompile(`^\$\{?([A-Z_]+)\}?$`)
	pinned = regexp.MustCompile(`^[a-z0-9./_-]+(:[A-Za-z0-9._-]+)?@sha256:[0-9a-f]{64}$`)
)

// resolve maps a FROM reference to an image: a stage name, or an ARG from versions.env.
func resolve(t *testing.T, from string, versions map[string]string) (image string, isStage bool) {
	t.Helper()
	m := argRef.FindStringSubmatch(from)
	if m == nil {
		return from, true // FROM <earlier stage>, or a literal (checked as an image below)
	}
	img, ok := versions[m[1]]
	if !ok {
		t.Errorf("FROM %s: %s is not in versions.env", from, m[1])
	}
	return img, false
}

// TestVersionsPinned checks versions.env: every image pinned by digest, and the
// HAProxy image's tag is HAPROXY_VERSION.
func TestVersionsPinned(t *testing.T) {
	v := readVersions(t)
	for _, k := range []string{"HAPROXY_VERSION", "HAPROXY_IMAGE", "GO_IMAGE", "BASE_IMAGE"} {
		if v[k] == "" {
			t.Errorf("versions.env: %s is missing", k)
		}
	}
	for k, img := range v {
		if strings.HasSuffix(k, "_IMAGE") && !pinned.MatchString(img) {
			t.Errorf("versions.env %s=%s: not pinned by digest (name:tag@sha256:<64 hex>)", k, img)
		}
	}
	if !strings.HasPrefix(v["HAPROXY_IMAGE"], "haproxy:"+v["HAPROXY_VERSION"]+"-") && !strings.HasPrefix(v["HAPROXY_IMAGE"], "haproxy:"+v["HAPROXY_VERSION"]+"@") {
		t.Errorf("HAPROXY_IMAGE %s is not HAProxy %s", v["HAPROXY_IMAGE"], v["HAPROXY_VERSION"])
	}
	if !strings.HasPrefix(v["BASE_IMAGE"], "gcr.io/distroless/") || !strings.Contains(v["BASE_IMAGE"], ":nonroot@") {
		t.Errorf("BASE_IMAGE %s: want a distroless nonroot image", v["BASE_IMAGE"])
	}
}

// TestDockerfiles checks both Dockerfiles: every FROM is a versions.env image or an
// earlier stage, the final stage runs as a non-root user, and the controller's final
// stage has no shell (a distroless base, no RUN, nothing shell-like copied in).
func TestDockerfiles(t *testing.T) {
	versions := readVersions(t)
	for _, c := range []struct {
		path    string
		noShell bool
	}{{"haptic/Dockerfile", true}, {"haproxy/Dockerfile", false}} {
		t.Run(c.path, func(t *testing.T) {
			args, stages := parseDockerfile(t, c.path)
			if len(stages) < 2 {
				t.Fatalf("%d stages, want a build stage and a runtime stage", len(stages))
			}
			declared := map[string]bool{}
			for _, a := range args {
				name, def, hasDefault := strings.Cut(a, "=")
				declared[name] = true
				if hasDefault {
					t.Errorf("ARG %s has a default (%s): versions.env is the one place of versions", name, def)
				}
			}
			names := map[string]bool{}
			for _, s := range stages {
				if m := argRef.FindStringSubmatch(s.from); m != nil && !declared[m[1]] {
					t.Errorf("FROM %s: ARG %s is not declared before the first FROM", s.from, m[1])
				}
				img, isStage := resolve(t, s.from, versions)
				if isStage && !names[img] {
					t.Errorf("FROM %s: neither a versions.env image nor an earlier stage", s.from)
				}
				if !isStage && !pinned.MatchString(img) {
					t.Errorf("FROM %s = %s: not pinned by digest", s.from, img)
				}
				if s.name != "" {
					names[s.name] = true
				}
			}
			final := stages[len(stages)-1]
			user := ""
			for _, l := range final.lines {
				if w, rest, _ := strings.Cut(l, " "); strings.EqualFold(w, "USER") {
					user = strings.TrimSpace(rest)
				}
			}
			if u, _, _ := strings.Cut(user, ":"); u == "" || u == "root" || u == "0" {
				t.Errorf("final stage USER %q: want a non-root user", user)
			}
			if c.noShell {
				base, _ := resolve(t, final.from, versions)
				if !strings.HasPrefix(base, "gcr.io/distroless/static") {
					t.Errorf("final stage FROM %s: want distroless static (no shell)", base)
				}
				for _, l := range final.lines {
					w, _, _ := strings.Cut(l, " ")
					if strings.EqualFold(w, "RUN") || strings.EqualFold(w, "SHELL") {
						t.Errorf("final stage: %q needs a shell the image must not have", l)
					}
					if strings.EqualFold(w, "COPY") && regexp.MustCompile(`\b(sh|bash|busybox|ash)\b`).MatchString(l) {
						t.Errorf("final stage: %q copies a shell", l)
					}
					if strings.EqualFold(w, "ENTRYPOINT") && !strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(l, w)), "[") {
						t.Errorf("final stage: %q is shell form; want exec form", l)
					}
				}
			}
		})
	}
}

// TestHAProxyImageLaunchesHAProxy: the HAProxy image's entrypoint is haptic-agent
// (the chart runs it as `launch` in HAProxy's container and as the agent in the
// other) and its stop signal is HAProxy's soft stop.
func TestHAProxyImageLaunchesHAProxy(t *testing.T) {
	_, stages := parseDockerfile(t, "haproxy/Dockerfile")
	final := stages[len(stages)-1]
	got := map[string]string{}
	for _, l := range final.lines {
		w, rest, _ := strings.Cut(l, " ")
		got[strings.ToUpper(w)] = strings.TrimSpace(rest)
	}
	if got["ENTRYPOINT"] != `["/usr/local/bin/haptic-agent"]` {
		t.Errorf("ENTRYPOINT %s, want haptic-agent", got["ENTRYPOINT"])
	}
	if got["STOPSIGNAL"] != "SIGUSR1" {
		t.Errorf("STOPSIGNAL %q, want SIGUSR1 (HAProxy's soft stop)", got["STOPSIGNAL"])
	}
}
