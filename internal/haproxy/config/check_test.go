package config

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestQuoteWordRoundTrips(t *testing.T) {
	cases := []string{"", "plain", "a b", "it's", `"backend" x`, `\x62ackend`, "#comment", "$HOME", "${X}", ";", "ünï", "%[src]", "'", "''", `\`}
	alphabet := []rune{'a', ' ', '\'', '"', '\\', '#', '$', '{', '}', ';', 'x', '%', 'é', '<'}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for n := r.Intn(12); n > 0; n-- {
			b.WriteRune(alphabet[r.Intn(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		q, err := QuoteWord(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		words, err := Words("setenv " + q + " tail")
		if err != nil || !reflect.DeepEqual(words, []string{"setenv", s, "tail"}) {
			t.Fatalf("%q quoted as %s reads back as %q (%v)", s, q, words, err)
		}
	}
	for _, s := range []string{"a\nb", "a\x00", "a\rb", "\t"} {
		if _, err := QuoteWord(s); err == nil {
			t.Errorf("%q: want an error", s)
		}
	}
}

func TestWordsUnquoteLikeHAProxy(t *testing.T) {
	for line, want := range map[string][]string{
		`"backend" x`:             {"backend", "x"},
		`'frontend' x`:            {"frontend", "x"},
		`\x62ackend x`:            {"backend", "x"},
		`bind "${POD_IP}:80" # c`: {"bind", "${POD_IP}:80"},
		`a'b c'd e`:               {"ab cd", "e"},
		`x\ y`:                    {"x y"},
	} {
		got, err := Words(line)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %q (%v), want %q", line, got, err, want)
		}
	}
	if _, err := Words(`a "b`); err == nil {
		t.Error("unterminated quote: want an error")
	}
}

func TestCheckMapFile(t *testing.T) {
	ok := "# comment\n\nexample.com/ be1\n  host\tvalue with spaces \t\nkeyonly\n"
	if err := CheckMapFile(ok); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"long line":       "k " + strings.Repeat("v", MaxMapLine),
		"payload marker":  "k value<<",
		"NUL":             "k\x00v value",
		"indented hash":   "  # x",
		"carriage return": "k v\rx",
	} {
		err := CheckMapFile(content)
		if err == nil {
			t.Errorf("%s: want an error", name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "line 1: ") {
			t.Errorf("%s: %v does not name the line", name, err)
		}
	}
	for _, k := range []string{"", "#x", "a b", "a\tb", "k<<"} {
		if CheckMapKey(k) == nil {
			t.Errorf("key %q: want an error", k)
		}
	}
}

func TestCheckConfigCountsWords(t *testing.T) {
	line := "acl x src" + strings.Repeat(" 10.0.0.1", MaxLineWords)
	if err := CheckConfig("global\n" + line + "\n"); err == nil || !strings.Contains(err.Error(), "words") {
		t.Fatalf("want a word-count error, got %v", err)
	}
	if err := CheckConfig("global\n  setenv X 'a b c'\n"); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFetchArg(t *testing.T) {
	if err := CheckFetchArg("X-Request-Id"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", "a#b", "a$b", "a'b", "a,b", "a)b", "a b", "a%b"} {
		if CheckFetchArg(s) == nil {
			t.Errorf("%q: want an error", s)
		}
	}
}

// TestCheckConfigLineIsWords: the one-pass check of a line says what the control
// character scan and Words say, on random lines of the characters that matter.
func TestCheckConfigLineIsWords(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	tokens := []string{"a ", "bc\t", "a", " ", "\t", "#", "\"", "'", "\\", "\\x4"}
	seen := map[string]int{}
	for range 200000 {
		var b strings.Builder
		kinds := len(tokens)
		if rng.Intn(2) == 0 {
			kinds = 2 // words only: lines of up to 200 words
		}
		for range rng.Intn(120) {
			b.WriteString(tokens[rng.Intn(kinds)])
		}
		if rng.Intn(10) == 0 { // a control character now and then
			at := rng.Intn(b.Len() + 1)
			s := b.String()
			b.Reset()
			b.WriteString(s[:at] + string([]byte{[]byte{0x01, 0x7f, '\r'}[rng.Intn(3)]}) + s[at:])
		}
		line := b.String()
		got := checkConfigLine(0, line)
		var want error
		for i := 0; i < len(line); i++ {
			if c := line[i]; (c < 0x20 && c != '\t') || c == 0x7f {
				want = lineErr(0, "%s", describeControl(c))
				break
			}
		}
		if want == nil {
			if w, err := Words(line); err != nil {
				want = &LineError{Line: 1, Err: err}
			} else if len(w) > MaxLineWords {
				want = lineErr(0, "%d words, HAProxy reads at most %d per line: %.60q", len(w), MaxLineWords, strings.TrimSpace(line))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: got %v, want %v", line, got, want)
		}
		switch {
		case want == nil:
			seen["accepted"]++
		case strings.Contains(want.Error(), "words"):
			seen["too many words"]++
		case strings.ContainsAny(line, "\x01\x7f"):
			seen["control"]++
		default:
			seen["unclosed"]++
		}
	}
	if len(seen) != 4 {
		t.Fatalf("the lines made only %v", seen)
	}
}

// A large file is checked in halves on two cores; the error is still the first
// failing line's, numbered in the whole file.
func TestCheckLargeFileNamesFirstBadLine(t *testing.T) {
	lines := make([]string, 40000) // about 1 MB: past splitCheckMin
	for i := range lines {
		lines[i] = "    server srv_10_0_0_1_8080 10.0.0.1:8080 check"
	}
	bad := "    server \"unclosed"
	for _, c := range []struct {
		name string
		bad  []int // 0-based lines made bad
		want int   // 1-based line reported; 0: no error
	}{
		{"clean", nil, 0},
		{"first half", []int{10}, 11},
		{"second half", []int{30000}, 30001},
		{"both halves", []int{25000, 30000}, 25001},
		{"last line", []int{39999}, 40000},
	} {
		ls := slices.Clone(lines)
		for _, i := range c.bad {
			ls[i] = bad
		}
		err := CheckConfig(strings.Join(ls, "\n"))
		var le *LineError
		switch {
		case c.want == 0 && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != 0 && (!errors.As(err, &le) || le.Line != c.want):
			t.Errorf("%s: got %v, want an error at line %d", c.name, err, c.want)
		}
	}
}
