package snapshot

import (
	"hash/maphash"
	"maps"
	"slices"
	"sync"
)

// objectIndex is the index of a store that is not key-ordered: the objects under
// each full index key (indexKey of all their index values), in store order. It is
// persistent: a store made With a few changes shares every shard the changes do not
// touch, so a change costs the shards of its keys, not an index of every object (it
// was rebuilt whole on every change: 17–18 ms for one EndpointSlice among 100,000).
type objectIndex struct {
	shards [indexShards]map[string][]Object
}

// indexShards is how many maps the index is cut into: a change copies one per key
// it touches, about 1/64 of the index.
const indexShards = 64

var indexSeed = maphash.MakeSeed()

func shardOf(key string) int { return int(maphash.String(indexSeed, key) % indexShards) }

// newObjectIndex indexes objs (in store order) under their full keys.
func newObjectIndex(objs []Object, fullKey func(Object) string) *objectIndex {
	x := &objectIndex{}
	for _, o := range objs {
		k := fullKey(o)
		i := shardOf(k)
		if x.shards[i] == nil {
			x.shards[i] = make(map[string][]Object, len(objs)/indexShards+1)
		}
		x.shards[i][k] = append(x.shards[i][k], o)
	}
	return x
}

func (x *objectIndex) get(key string) []Object { return x.shards[shardOf(key)][key] }

// edited is x with the objects gone taken out and those that came put in (both in
// store order), each under its full key; x is left as it is.
func (x *objectIndex) edited(gone, came []Object, fullKey func(Object) string) *objectIndex {
	type edit struct{ gone, came []Object }
	edits := map[string]*edit{}
	at := func(o Object) *edit {
		k := fullKey(o)
		if edits[k] == nil {
			edits[k] = &edit{}
		}
		return edits[k]
	}
	for _, o := range gone {
		e := at(o)
		e.gone = append(e.gone, o)
	}
	for _, o := range came {
		e := at(o)
		e.came = append(e.came, o)
	}
	out := *x
	var copied [indexShards]bool
	for k, e := range edits {
		i := shardOf(k)
		if !copied[i] {
			out.shards[i], copied[i] = maps.Clone(x.shards[i]), true
			if out.shards[i] == nil {
				out.shards[i] = map[string][]Object{}
			}
		}
		list := slices.DeleteFunc(slices.Clone(x.get(k)), func(o Object) bool {
			return slices.ContainsFunc(e.gone, func(g Object) bool { return g.Namespace == o.Namespace && g.Name == o.Name })
		})
		for _, o := range e.came {
			j, _ := slices.BinarySearchFunc(list, o, compareKeys)
			list = slices.Insert(list, j, o)
		}
		if len(list) == 0 {
			delete(out.shards[i], k)
		} else {
			out.shards[i][k] = list
		}
	}
	return &out
}

// prefixIndex answers the Fetches of a store that give fewer keys than it has
// index values (a namespace's EndpointSlices, say): each prefix is found by a walk
// over the objects the first time it is asked for, and kept with the store. The
// libraries ask for none; keeping them in the index would copy the list of every
// object of a namespace on each change.
type prefixIndex struct {
	mu    sync.Mutex
	lists map[string][]Object
}

func (p *prefixIndex) get(ikey string, find func() []Object) []Object {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.lists[ikey]; ok {
		return l
	}
	if p.lists == nil {
		p.lists = map[string][]Object{}
	}
	l := find()
	p.lists[ikey] = l
	return l
}
