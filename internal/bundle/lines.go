package bundle

// CommonLines returns the lengths of the longest common prefix and suffix of a and
// b that are whole lines and do not overlap: the lines between them are the only
// ones that differ. A new version of a rendered file differs from the last in the
// lines of the objects that changed, so checks and plans read those lines only.
// For equal texts it returns (len(a), 0). The answer for two large texts is
// remembered (linescache.go): the same pair is compared again down the pipeline.
func CommonLines(a, b Text) (prefix, suffix int) {
	if a.Len() < commonCacheMin || b.Len() < commonCacheMin {
		return commonLinesFrom(a, b, 0, 0)
	}
	if p, s, ok := commonsGet(a, b); ok {
		return p, s
	}
	prefix, suffix = commonLinesFrom(a, b, 0, 0)
	commonsPut(a, b, prefix, suffix)
	return prefix, suffix
}

// Edited records that b was made from a by replacing what lies between a's first
// head and last tail bytes: CommonLines(a, b) is computed reading only around the
// edit and remembered for the compares down the pipeline. Texts too small to be
// remembered are left alone. The caller vouches that a and b begin with the same
// head bytes and end with the same tail bytes.
func Edited(a, b Text, head, tail int) {
	if a.Len() >= commonCacheMin && b.Len() >= commonCacheMin {
		prefix, suffix := commonLinesFrom(a, b, head, tail)
		commonsPut(a, b, prefix, suffix)
	}
}

// commonLinesFrom is CommonLines(a, b) for a and b known to share their first head
// and last tail bytes: those are not compared.
func commonLinesFrom(a, b Text, head, tail int) (prefix, suffix int) {
	la, lb := a.Len(), b.Len()
	n := min(la, lb)
	prefix = commonPrefixText(a, b, head, n)
	if prefix == la && prefix == lb {
		return prefix, 0
	}
	prefix = a.LastIndexByte(prefix, '\n') + 1
	known := min(tail, n-prefix)
	suffix = commonSuffixText(a, b, known, n-prefix)
	// the suffix starts a line on both sides, or after a line's end they share
	lineStart := func(s Text, at int) bool { return at == 0 || s.byteAt(at-1) == '\n' }
	if !lineStart(a, la-suffix) || !lineStart(b, lb-suffix) {
		if i := a.IndexByte(la-suffix, '\n'); i >= 0 {
			suffix = la - i - 1
		} else {
			suffix = 0
		}
	}
	return prefix, suffix
}

// commonPrefixText is the length of the common prefix of a and b, at most n, known
// to be at least i. Pieces the two share are passed without a read.
func commonPrefixText(a, b Text, i, n int) int {
	for i < n {
		x, y := a.run(i), b.run(i)
		m := min(len(x), len(y), n-i)
		if SameString(x[:m], y[:m]) {
			i += m
			continue
		}
		k := commonPrefix(x, y, m)
		if i += k; k < m {
			return i
		}
	}
	return i
}

// commonSuffixText is the length of the common suffix of a and b, at most n, known
// to be at least i.
func commonSuffixText(a, b Text, i, n int) int {
	la, lb := a.Len(), b.Len()
	for i < n {
		x, y := a.runBack(la-i), b.runBack(lb-i)
		m := min(len(x), len(y), n-i)
		x, y = x[len(x)-m:], y[len(y)-m:]
		if SameString(x, y) {
			i += m
			continue
		}
		k := commonSuffix(x, y, m)
		if i += k; k < m {
			return i
		}
	}
	return i
}

// CommonPrefixLen is the length of the longest common prefix of a and b.
func CommonPrefixLen(a, b string) int { return commonPrefix(a, b, min(len(a), len(b))) }

// CommonSuffixLen is the length of the longest common suffix of a and b.
func CommonSuffixLen(a, b string) int { return commonSuffix(a, b, min(len(a), len(b))) }

// chunk is how many bytes are compared at once (a string compare is vectorised;
// a byte loop is not).
const chunk = 256

// commonPrefix is the length of the common prefix of a and b, at most n.
func commonPrefix(a, b string, n int) int {
	i := 0
	for i+chunk <= n && a[i:i+chunk] == b[i:i+chunk] {
		i += chunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the common suffix of a and b, at most n.
func commonSuffix(a, b string, n int) int {
	i := 0
	for i+chunk <= n && a[len(a)-i-chunk:len(a)-i] == b[len(b)-i-chunk:len(b)-i] {
		i += chunk
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}
