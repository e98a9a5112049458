package render

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestIsCIDR(t *testing.T) {
	for s, want := range map[string]bool{
		"10.0.0.0/8": true, "192.168.1.1": true, "010.0.0.1": true, "255.255.255.255/32": true,
		"256.0.0.1": false, "1.2.3.4/33": false, "1.2.3.4/": false, "1.2.3": false, "1.2.3.4/8/8": false,
		"1.2.3.4/1234": false, "1.2.3.4 ": false, "a.b.c.d": false,
		"::1": true, "fe80::/10": true, "2001:db8:0:0:0:0:0:1/128": true, "2001:db8::1/129": false,
		"1::2::3": false, "12345::1": false, "::g": false, ":": false, "": false, "1:2:3:4:5:6:7:8:9": false,
	} {
		if got := isCIDR(s); got != want {
			t.Errorf("is_cidr(%q) = %v, want %v", s, got, want)
		}
	}
}

// The Go checks agree with the regular expressions the library used before them.
func TestDNSChecksMatchTheirRegexps(t *testing.T) {
	label := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	sub := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	host := regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	cases := []string{"", "a", "a-b", "-a", "a-", "a.b", "a..b", ".a", "a.", "*.a.b", "*.", "*a", "A", "a_b",
		"a b", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 127) + "a",
		"*." + strings.Repeat("a.", 125) + "a", "xn--bcher-kva.example", "1.2.3.4"}
	for _, s := range cases {
		if got, want := isDNSLabel(s), label.MatchString(s) && len(s) <= 63; got != want {
			t.Errorf("is_dns_label(%q) = %v, want %v", s, got, want)
		}
		if got, want := isDNSSubdomain(s), sub.MatchString(s) && len(s) <= 253; got != want {
			t.Errorf("is_dns_subdomain(%q) = %v, want %v", s, got, want)
		}
		if got, want := isDNSHost(s), host.MatchString(s) && len(s) <= 253; got != want {
			t.Errorf("is_dns_host(%q) = %v, want %v", s, got, want)
		}
	}
}

// is_header_name and value_problem agree with the regular expressions the gateway
// library used before them, over every single byte and some longer strings.
func TestHeaderChecksMatchTheirRegexps(t *testing.T) {
	name := regexp.MustCompile(`^[A-Za-z0-9!*+.^_|~-]+$`)
	control := regexp.MustCompile(`[\x00-\x1f\x7f]`)
	cases := []string{"", "X-Added", "x_y.z", "a b", "a:b", "a\tb", "é", "ok\x7f", "line\nbreak", "\x00", "tilde~|^*+!"}
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	for _, s := range cases {
		if got, want := isHeaderName(s), name.MatchString(s); got != want {
			t.Errorf("is_header_name(%q) = %v, want %v", s, got, want)
		}
		want := ""
		if control.MatchString(s) {
			want = toJSON(s) + " holds control characters"
		}
		if got := valueProblem(s); got != want {
			t.Errorf("value_problem(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestIsDuration(t *testing.T) {
	for s, want := range map[string]bool{"10": true, "10s": true, "500ms": true, "3us": true, "2m": true, "1h": true, "7d": true,
		"": false, "s": false, "10x": false, "10sm": false, "1.5s": false, "-1s": false, " 1s": false, "10 s": false} {
		if got := isDuration(s); got != want {
			t.Errorf("is_duration(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestIsRegex(t *testing.T) {
	if !isRegex(`^/api/(.*)$`) || isRegex(`(`) || isRegex(`a**`) {
		t.Fatal("is_regex disagrees with regexp.Compile")
	}
}

func TestAnnotationValues(t *testing.T) {
	if got := annotationValues(map[string]string{"other/x": "1"}, "p/"); got != nil {
		t.Fatalf("no annotation of the prefix: want nil, got %v", got)
	}
	got := annotationValues(map[string]string{"p/a": " 1 \n", "p/b": "", "q/a": "x", "p/": "root"}, "p/")
	want := map[string]string{"a": "1", "b": "", "": "root"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestChunksAndCommaList(t *testing.T) {
	if got := chunks([]string{"a", "b", "c", "d", "e"}, 2); !reflect.DeepEqual(got, [][]string{{"a", "b"}, {"c", "d"}, {"e"}}) {
		t.Fatalf("chunks: %v", got)
	}
	if got := chunks(nil, 2); got != nil {
		t.Fatalf("chunks of nothing: %v", got)
	}
	if got := commaList(" a, ,b ,, c "); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("comma_list: %v", got)
	}
	if got := commaList(" , "); got != nil {
		t.Fatalf("comma_list of nothing: %v", got)
	}
}

func TestRawConfigLines(t *testing.T) {
	lines, why := rawConfigLines("  http-request deny if { path /x }\n\n# a comment\nretries 2 ")
	if why != "" || !reflect.DeepEqual(lines, []string{"http-request deny if { path /x }", "retries 2"}) {
		t.Fatalf("got %q, %q", lines, why)
	}
	for v, want := range map[string]string{
		"a\r\nb":                 "carriage returns",
		"x\x01":                  "control characters",
		`x "open`:                "unterminated quote",
		"backend evil":           `open a section ("backend")`,
		`"BACKEND" evil`:         `open a section ("backend")`,
		`\x62ackend evil`:        `open a section ("backend")`,
		".if defined(X)":         "conditional block directive",
		`"" x`:                   "empty word",
		strings.Repeat("w ", 65): "65 words",
		`x "a\x00b"`:             "NUL byte",
	} {
		if _, why := rawConfigLines(v); !strings.Contains(why, want) {
			t.Errorf("raw_config_lines(%q): %q, want it to say %q", v, why, want)
		}
	}
}

func TestHtpasswdUsers(t *testing.T) {
	users, why := htpasswdUsers("# users\r\nalice:$2y$05$abcdefghijklmnopqrstuv\n\nbob@x:$apr1$x\n")
	if why == "" || !strings.Contains(why, "line 4") {
		t.Fatalf("an $apr1$ hash passed: %q %q", users, why)
	}
	users, why = htpasswdUsers("alice:$2y$05$abc./def\nbob.b:$6$salt$hash")
	if why != "" || !reflect.DeepEqual(users, []string{"user alice password '$2y$05$abc./def'", "user bob.b password '$6$salt$hash'"}) {
		t.Fatalf("got %q, %q", users, why)
	}
	for content, want := range map[string]string{"": "no user", "# only\n": "no user", "a:b:c": "line 1 is not user:hash",
		"a b:$6$x": "line 1 is not user:hash", "secret-user:plain": "line 1: the password is not a crypt(3) hash"} {
		if _, why := htpasswdUsers(content); !strings.HasPrefix(why, want) || strings.Contains(why, "plain") {
			t.Errorf("htpasswd_users(%q): %q, want %q (never the content)", content, why, want)
		}
	}
}

// TestKeyRunsAreLocal: key_runs covers the keys in order with runs of at most 4n,
// and adding a key leaves all but the runs around it as they were (runs of n by
// position would all shift after it).
func TestKeyRunsAreLocal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	runsOf := func(keys []string, n int) map[string]bool {
		b := keyRuns(keys, n)
		if b[0] != 0 || (len(keys) > 0 && b[len(b)-1] != len(keys)) {
			t.Fatalf("bounds %v for %d keys", b, len(keys))
		}
		out := map[string]bool{}
		for r := 0; r+1 < len(b); r++ {
			if b[r+1] <= b[r] || b[r+1]-b[r] > 4*n {
				t.Fatalf("run %d: bounds %v", r, b[r:r+2])
			}
			out[strings.Join(keys[b[r]:b[r+1]], ",")] = true
		}
		return out
	}
	if b := keyRuns(nil, 8); len(b) != 1 {
		t.Fatalf("no keys: %v", b)
	}
	for trial := range 300 {
		n := 1 + rng.IntN(16)
		var keys []string
		for range rng.IntN(400) {
			keys = append(keys, fmt.Sprintf("ns%d/ing-%d", rng.IntN(3), rng.IntN(5000)))
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		before := runsOf(keys, n)
		added := slices.Insert(slices.Clone(keys), 0, fmt.Sprintf("ns%d/new-%d", rng.IntN(3), trial))
		slices.Sort(added)
		after := runsOf(added, n)
		lost := 0
		for r := range before {
			if !after[r] {
				lost++
			}
		}
		if lost > 2 {
			t.Fatalf("trial %d (n=%d): adding one key changed %d of %d runs", trial, n, lost, len(before))
		}
	}
}
