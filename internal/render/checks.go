package render

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/open2b/scriggo/native"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// Typed helpers for what every library does per object: reading annotations,
// checking values (durations, addresses, names, regular expressions) and splitting
// lists. They replace template functions held in variables, each of whose calls
// starts a new virtual machine (about 23 µs, see docs/rendering.md); these are plain
// Go. Their signatures are ones Scriggo calls without reflect where it can.

func checkBuiltins() native.Declarations {
	return native.Declarations{
		"annotation_values": annotationValues,
		"is_cidr":           isCIDR,
		"is_regex":          isRegex,
		"is_duration":       isDuration,
		"is_dns_label":      isDNSLabel,
		"is_dns_subdomain":  isDNSSubdomain,
		"is_dns_host":       isDNSHost,
		"is_header_name":    isHeaderName,
		"value_problem":     valueProblem,
		"chunks":            chunks,
		"comma_list":        commaList,
		"raw_config_lines":  rawConfigLines,
		"htpasswd_users":    htpasswdUsers,
	}
}

// annotationValues returns the annotations whose name starts with prefix, by the rest
// of the name, values trimmed of surrounding whitespace; nil when there is none (most
// objects carry none of a library's annotations).
func annotationValues(ann map[string]string, prefix string) map[string]string {
	var out map[string]string
	for k, v := range ann {
		if strings.HasPrefix(k, prefix) {
			if out == nil {
				out = map[string]string{}
			}
			out[k[len(prefix):]] = strings.TrimSpace(v)
		}
	}
	return out
}

// isCIDR reports whether s is an IPv4 or IPv6 address with an optional prefix length,
// as HAProxy's src ACL reads it: dotted quads of at most three digits each up to 255
// (leading zeros allowed) and /0 to /32, or colon groups of hex digits (at most one
// "::") and /0 to /128.
func isCIDR(s string) bool {
	addr, bits, hasBits := strings.Cut(s, "/")
	if hasBits && (strings.Contains(bits, "/") || !digits(bits, 1, 3)) {
		return false
	}
	n, _ := strconv.Atoi(bits)
	if isDottedQuad(addr) {
		return !hasBits || n <= 32
	}
	if isColonHex(addr) {
		return !hasBits || n <= 128
	}
	return false
}

// digits reports whether s is min to max ASCII digits.
func digits(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isDottedQuad(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if !digits(p, 1, 3) {
			return false
		}
		if n, _ := strconv.Atoi(p); n > 255 {
			return false
		}
	}
	return true
}

// isColonHex: 3 to 8 groups of 0 to 4 hex digits separated by ":", with "::" at most once.
func isColonHex(s string) bool {
	groups := strings.Split(s, ":")
	if len(groups) < 3 || len(groups) > 8 || strings.Count(s, "::") > 1 {
		return false
	}
	for _, g := range groups {
		if len(g) > 4 {
			return false
		}
		for i := 0; i < len(g); i++ {
			c := g[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// isRegex reports whether p is a regular expression in Go's syntax (which PCRE2
// reads the same way for the constructs both have).
func isRegex(p string) bool {
	_, err := regexp.Compile(p)
	return err == nil
}

// isDuration reports whether s is an HAProxy time: digits with an optional unit
// (us, ms, s, m, h, d).
func isDuration(s string) bool {
	num := strings.TrimRight(s, "usmhd")
	unit := s[len(num):]
	if !digits(num, 1, len(num)) {
		return false
	}
	switch unit {
	case "", "us", "ms", "s", "m", "h", "d":
		return true
	}
	return false
}

// isDNSLabel reports whether s is a DNS-1123 label (namespaces, Service names,
// port names): at most 63 lower-case letters, digits and inner "-".
func isDNSLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// isDNSSubdomain reports whether s is a DNS-1123 subdomain (names of most objects,
// host names): labels joined by ".", at most 253 characters.
func isDNSSubdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if len(label) == 0 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// isHeaderName reports whether s is an HTTP header name made of token characters
// that are also safe inside a sample-fetch argument: letters, digits and
// ! * + . ^ _ | ~ -.
func isHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!*+.^_|~-", c) >= 0) {
			return false
		}
	}
	return true
}

// valueProblem says why s cannot be a header value ("" when it can): a control
// character (0x00–0x1f, 0x7f) would end or split the configuration line.
func valueProblem(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return toJSON(s) + " holds control characters"
		}
	}
	return ""
}

// isDNSHost reports whether s is a host name a route may match: a DNS-1123
// subdomain, optionally behind a "*." wildcard, at most 253 characters in all.
func isDNSHost(s string) bool {
	if len(s) > 253 {
		return false
	}
	return isDNSSubdomain(strings.TrimPrefix(s, "*."))
}

// chunks splits items into slices of at most n (HAProxy reads at most 64 words a
// line, so long lists from objects are written a chunk a line).
func chunks(items []string, n int) [][]string {
	if n < 1 {
		n = 1
	}
	var out [][]string
	for i := 0; i < len(items); i += n {
		out = append(out, items[i:min(i+n, len(items))])
	}
	return out
}

// keyRuns splits sorted keys into runs of about n for cached fragments, and
// returns where each run starts, then len(keys). A run ends after a key whose
// hash is 0 modulo n (or at 4n keys), so where runs end depends on the keys
// themselves, not on positions: inserting a key changes only its own run, where
// runs of n by position would all shift after it and render again.
func keyRuns(keys []string, n int) []int {
	return runStarts(len(keys), n, func(i int) uint32 { return fnv32a(keys[i]) })
}

// runStarts is keyRuns of count keys whose hashes hash gives.
func runStarts(count, n int, hash func(i int) uint32) []int {
	if n < 1 {
		n = 1
	}
	starts := []int{0}
	for i := range count {
		if i+1 < count && (hash(i)%uint32(n) == 0 || i+1-starts[len(starts)-1] >= 4*n) {
			starts = append(starts, i+1)
		}
	}
	if count == 0 {
		return starts
	}
	return append(starts, count)
}

// fnv32a is the 32-bit FNV-1a hash of s.
func fnv32a(s string) uint32 { return fnv32aOn(2166136261, s) }

// fnv32aOn is FNV-1a of s continued from h.
func fnv32aOn(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// fnv32aJoined is fnv32a(strings.Join(parts, " ")), without joining them.
func fnv32aJoined(parts []string) uint32 {
	h := uint32(2166136261)
	for i, p := range parts {
		if i > 0 {
			h = (h ^ ' ') * 16777619
		}
		h = fnv32aOn(h, p)
	}
	return h
}

// commaList splits a comma-separated annotation value, trimming items and dropping
// empty ones.
func commaList(v string) []string {
	var out []string
	for x := range strings.SplitSeq(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// sectionKeywords open a configuration section: a raw line may not start with one.
var sectionKeywords = map[string]bool{"global": true, "defaults": true, "frontend": true, "backend": true,
	"listen": true, "userlist": true, "peers": true, "resolvers": true, "program": true, "http-errors": true,
	"ring": true, "cache": true, "mailers": true, "fcgi-app": true, "crt-store": true, "traces": true,
	"log-forward": true}

// rawConfigLines checks raw configuration lines an operator allowed (annotations
// such as config-backend) and returns them trimmed, without empty lines, or why they
// cannot be used. A line may not open a section or be a conditional block directive,
// judged on its first word as HAProxy reads it (quotes and escapes removed: "backend",
// 'frontend' and \x62ackend are all the keyword), never on the raw text.
func rawConfigLines(v string) ([]string, string) {
	if strings.Contains(v, "\r") {
		return nil, "carriage returns are not allowed"
	}
	var out []string
	for line := range strings.SplitSeq(v, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if hasControl(line) {
			return nil, "control characters are not allowed"
		}
		words, err := config.Words(line)
		if err != nil {
			return nil, "a line has an unterminated quote"
		}
		if len(words) == 0 {
			continue // a comment
		}
		if len(words) > 64 {
			return nil, "a line has " + strconv.Itoa(len(words)) + " words; HAProxy reads at most 64"
		}
		for _, w := range words {
			if strings.Contains(w, "\x00") {
				return nil, "a line may not hold a NUL byte (HAProxy would cut the word there)"
			}
		}
		first := strings.ToLower(words[0])
		if first == "" {
			return nil, "a line may not start with an empty word"
		}
		if sectionKeywords[first] {
			return nil, "a line may not open a section (" + toJSON(first) + ")"
		}
		if strings.HasPrefix(first, ".") {
			return nil, "a line may not be a conditional block directive (" + toJSON(first) + ")"
		}
		out = append(out, line)
	}
	return out, ""
}

// hasControl reports whether s holds an ASCII control character or DEL.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

var (
	htpasswdUser = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)
	htpasswdHash = regexp.MustCompile(`^\$(1|5|6|2[aby]|y)\$[./A-Za-z0-9$=]+$`)
)

// htpasswdUsers turns htpasswd content (user:crypt-hash per line, # comments) into
// userlist lines ("user <name> password <hash>"), or says why not. The reason never
// quotes the content: it is a Secret's.
func htpasswdUsers(content string) ([]string, string) {
	var out []string
	n := 0
	for line := range strings.SplitSeq(strings.ReplaceAll(content, "\r", ""), "\n") {
		n++
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, hash, ok := strings.Cut(line, ":")
		if !ok || strings.Contains(hash, ":") || !htpasswdUser.MatchString(user) {
			return nil, "line " + strconv.Itoa(n) + " is not user:hash with a user name of letters, digits and . _ @ -"
		}
		if !htpasswdHash.MatchString(hash) {
			return nil, "line " + strconv.Itoa(n) + ": the password is not a crypt(3) hash ($1$, $5$, $6$, $2b$/$2y$ or $y$)"
		}
		// Both words hold only characters a plain word may: QuoteWord cannot fail.
		u, _ := config.QuoteWord(user)
		h, _ := config.QuoteWord(hash)
		out = append(out, "user "+u+" password "+h)
	}
	if len(out) == 0 {
		return nil, "no user"
	}
	return out, ""
}
