package bundle

// commonCacheMin is the size from which CommonLines remembers its answer for a pair
// of texts: a rendered map and its last version are compared by the render's check,
// the plan, the map translation and the agent edit in turn, each a scan of the
// whole map for a change of a few lines.
const commonCacheMin = 32 << 10

// commonCacheSize bounds the remembered pairs (a render's large files, a few times
// over).
const commonCacheSize = 128

// commons remembers CommonLines of pairs of large texts by the identity of their
// bytes, held weakly as the hashes are (hashcache.go): the same bytes at the same
// length are the same content.
var commons = newBoundedCache[textPair, [2]int](commonCacheSize)

type textPair struct{ a, b contentID }

// commonsGet returns the remembered CommonLines(a, b); the answer is the same for
// (b, a).
func commonsGet(a, b Text) (prefix, suffix int, ok bool) {
	ia, ib := a.id(), b.id()
	v, ok := commons.get(textPair{ia, ib})
	if !ok {
		v, ok = commons.get(textPair{ib, ia})
	}
	return v[0], v[1], ok
}

func commonsPut(a, b Text, prefix, suffix int) {
	commons.put(textPair{a.id(), b.id()}, [2]int{prefix, suffix})
}
