package render

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/open2b/scriggo/native"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// FailError is returned when a template calls fail(msg).
type FailError struct {
	Template string
	Message  string
}

func (e *FailError) Error() string { return e.Message }

// builtins are the helper functions every template can call.
func builtins() native.Declarations {
	return native.Declarations{
		"fallback":      fallback,
		"coalesce":      coalesce,
		"fail":          fail,
		"toint":         toInt,
		"tofloat":       toFloat,
		"tostring":      toString,
		"toStringSlice": toStringSlice,
		"toSlice":       toSlice,
		"isNil":         isNil,
		"keys":          keys,
		"sort_strings":  sortStrings,
		"unique":        unique,
		"join":          strings.Join,
		"split":         strings.Split,
		"contains":      strings.Contains,
		"hasPrefix":     strings.HasPrefix,
		"hasSuffix":     strings.HasSuffix,
		"lower":         strings.ToLower,
		"upper":         strings.ToUpper,
		"trim":          strings.TrimSpace,
		"trimPrefix":    strings.TrimPrefix,
		"trimSuffix":    strings.TrimSuffix,
		"replace":       strings.ReplaceAll,
		"repeat":        strings.Repeat,
		"fields":        strings.Fields,
		"indent":        indent,
		"b64encode":     b64encode,
		"b64decode":     b64decode,
		"sha256":        sha256Hex,
		"regex_match":   regexMatch,
		"regex_replace": regexReplace,
		"regex_quote":   regexp.QuoteMeta,
		"toJSON":        toJSON,
		"dig":           dig,
		"seq":           seq,
		"ceil":          ceil,
		"is_ip":         isIP,
		"config_words":  configWords,
		"tls_problem":   tlsProblem,
		"ca_problem":    caProblem,
		// fetch_arg is a writer (writers.go); declared here too so that templates
		// have it whichever declaration list the engine merges last.
		"fetch_arg": fetchArg,
	}
}

// isIP reports whether s is an IPv4 or IPv6 address as a server line may hold it:
// no zone ("fe80::1%eth0"), no brackets, no port, no prefix length.
func isIP(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Zone() == ""
}

// configWords splits one haproxy.cfg line into the words HAProxy reads (quotes,
// escapes and comments applied, see config.Words). It returns nil when a quote
// is not closed, a line HAProxy refuses; an empty or comment-only line gives an
// empty, non-nil slice.
func configWords(line string) []string {
	words, err := config.Words(line)
	if err != nil {
		return nil
	}
	if words == nil {
		words = []string{}
	}
	return words
}

// fallback returns v unless it is nil or the zero value of its type.
func fallback(v, def any) any {
	if isZero(v) {
		return def
	}
	return v
}

func coalesce(vals ...any) any {
	for _, v := range vals {
		if !isZero(v) {
			return v
		}
	}
	return nil
}

func isZero(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.IsZero()
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func:
		return rv.IsNil()
	}
	return false
}

// fail stops the render with the template author's message.
func fail(env native.Env, msg string) string {
	env.Stop(&FailError{Template: env.CallPath(), Message: msg})
	return ""
}

func toInt(v any) int {
	switch x := v.(type) {
	case nil:
		return 0
	case int:
		return x
	case int32:
		return int(x)
	case int64:
		return int(x)
	case float64:
		return int(x)
	case bool:
		if x {
			return 1
		}
		return 0
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			panic(fmt.Sprintf("toint: %q is not an integer", x))
		}
		return n
	}
	panic(fmt.Sprintf("toint: cannot convert %T", v))
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case nil:
		return 0
	case float64:
		return x
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			panic(fmt.Sprintf("tofloat: %q is not a number", x))
		}
		return f
	}
	return float64(toInt(v))
}

func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func toSlice(v any) []any {
	if v == nil {
		return nil
	}
	if s, ok := v.([]any); ok {
		return s
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return []any{v}
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out
}

func toStringSlice(v any) []string {
	items := toSlice(v)
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = toString(it)
	}
	return out
}

// keys returns the sorted keys of any map with string keys.
func keys(m any) []string {
	rv := reflect.ValueOf(m)
	if rv.Kind() != reflect.Map {
		return nil
	}
	out := make([]string, 0, rv.Len())
	for _, k := range rv.MapKeys() {
		out = append(out, fmt.Sprint(k.Interface()))
	}
	sort.Strings(out)
	return out
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func unique(s []string) []string {
	seen := make(map[string]bool, len(s))
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

func b64encode(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func b64decode(s string) string {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		panic(fmt.Sprintf("b64decode: %v", err))
	}
	return string(b)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// regexCache holds compiled patterns, the templates' own and those objects bring
// (route paths, header matches), up to regexCacheMax: past it a pattern is compiled
// at each use, so that a stream of distinct patterns from objects cannot grow the
// process without bound.
var (
	regexCache     sync.Map // pattern → *regexp.Regexp
	regexCacheSize atomic.Int64
)

const regexCacheMax = 4096

func compiled(pattern string) *regexp.Regexp {
	if re, ok := regexCache.Load(pattern); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		panic(fmt.Sprintf("invalid regular expression %q: %v", pattern, err))
	}
	if regexCacheSize.Load() < regexCacheMax {
		if _, loaded := regexCache.LoadOrStore(pattern, re); !loaded {
			regexCacheSize.Add(1)
		}
	}
	return re
}

func regexMatch(pattern, s string) bool { return compiled(pattern).MatchString(s) }

func regexReplace(pattern, repl, s string) string {
	return compiled(pattern).ReplaceAllString(s, repl)
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("toJSON: %v", err))
	}
	return string(b)
}

// dig walks decoded JSON by keys and list indexes; it returns nil when a step is
// missing, which makes it the untyped dialect's safe accessor.
func dig(v any, path ...any) any {
	cur := v
	for _, step := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[toString(step)]
		case map[string]string:
			cur = c[toString(step)]
		case []any:
			i := toInt(step)
			if i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

func seq(n int) []int {
	out := make([]int, max(n, 0))
	for i := range out {
		out[i] = i
	}
	return out
}

func ceil(f float64) int { return int(math.Ceil(f)) }
