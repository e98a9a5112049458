package writer

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// Ledger remembers which Gateways (object and generation) each bundle was rendered
// from, so that a deploy of that bundle can mark them Programmed. Each fleet keeps a
// ledger of its own (fleets may render identical bundles, e.g. two new Gateways
// before the stores hold them, and each keeps what it rendered); a render of a hash
// again adds its Gateways to what the hash has.
type Ledger struct {
	mu     sync.Mutex
	hashes map[string]map[types.NamespacedName]Revision
	order  []string
}

// ledgerKept is how many bundles a fleet's ledger keeps (in flight at most; pacing
// keeps it far lower).
const ledgerKept = 16

// Rendered records that bundle hash was rendered from gws.
func (l *Ledger) Rendered(hash string, gws map[types.NamespacedName]Revision) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hashes == nil {
		l.hashes = map[string]map[types.NamespacedName]Revision{}
	}
	rec, ok := l.hashes[hash]
	if !ok {
		rec = map[types.NamespacedName]Revision{}
		l.hashes[hash] = rec
		l.order = append(l.order, hash)
	}
	for gw, rev := range gws {
		// The same bundle from a newer generation of the same object: the bundle
		// holds that generation too.
		if cur, ok := rec[gw]; ok && cur.UID == rev.UID && cur.Generation > rev.Generation {
			continue
		}
		rec[gw] = rev
	}
	for len(l.order) > ledgerKept {
		delete(l.hashes, l.order[0])
		l.order = l.order[1:]
	}
}

// Deployed returns the Gateways bundle hash was rendered from that serves accepts:
// those a deploy of it to a fleet's pod makes live.
func (l *Ledger) Deployed(hash string, serves func(types.NamespacedName) bool) map[types.NamespacedName]Revision {
	l.mu.Lock()
	defer l.mu.Unlock()
	live := map[types.NamespacedName]Revision{}
	for gw, rev := range l.hashes[hash] {
		if serves(gw) {
			live[gw] = rev
		}
	}
	return live
}

// RenderedGateways returns the Gateways of want (as the status writer sees them)
// that the stores of snap hold, at the object and generation held there: what a
// render of snap is made from. The informer cache the writer reads may be ahead of
// the snapshot (a Gateway it already sees, a newer generation): what snap does not
// hold is not in the render, and a deploy of it must not make that Gateway
// Programmed. Without a full store of Gateways (none watched, or on-demand) what a
// render holds is unknown and want is taken as it is.
func RenderedGateways(want map[types.NamespacedName]Revision, stores []string, snap *snapshot.Snapshot) map[types.NamespacedName]Revision {
	held := map[types.NamespacedName]Revision{}
	known := false
	for _, name := range stores {
		st := snap.Stores[name]
		if st == nil || st.OnDemand != nil {
			continue
		}
		known = true
		for _, o := range st.List() {
			meta, _ := o.Raw["metadata"].(map[string]any)
			uid, _ := meta["uid"].(string)
			held[types.NamespacedName{Namespace: o.Namespace, Name: o.Name}] = Revision{UID: types.UID(uid), Generation: toInt64(meta["generation"])}
		}
	}
	if !known {
		return want
	}
	out := make(map[types.NamespacedName]Revision, len(want))
	for nn, w := range want {
		r, ok := held[nn]
		switch {
		case !ok:
		case r.Generation == 0: // metadata.generation not kept (watchedResourcesIgnoreFields)
			out[nn] = Revision{UID: r.UID, Generation: w.Generation}
		default:
			out[nn] = r
		}
	}
	return out
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}
