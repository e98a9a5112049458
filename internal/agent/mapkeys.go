package agent

import (
	"strings"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// mapKeys remembers, by map name, the entries of the map's last content by key,
// so that the read-back of a change's few keys costs those keys, not a scan of
// a map of thousands of lines: an edit updates the entries by the lines its
// splices take out and put in. Guarded by the agent's mu.
type mapKeys struct {
	byName map[string]*keyIndex
}

// keyIndex is content's entries (runtime.EachMapEntry) by key: the values of a
// key's entries, in no particular order. Keys and values are copies, so that an
// index kept across edits holds no old content.
type keyIndex struct {
	content bundle.Text
	values  map[string][]string
}

// entries returns the index of name's content, or nil when the one remembered
// is of another content (the caller scans the content: building an index costs
// more than one scan, and pays only when edits follow).
func (m *mapKeys) entries(name string, content bundle.Text) *keyIndex {
	if ix := m.byName[name]; ix != nil && ix.content.Equal(content) {
		return ix
	}
	return nil
}

// edited moves name's index to content, which e made from base; the index of
// base is built first when the one remembered is of another content (the map
// arrived whole). Unless every splice takes out and puts in whole lines, the
// index is dropped.
func (m *mapKeys) edited(name string, base, content bundle.Text, e agentapi.FileEdit) {
	if !wholeLines(base, e) {
		delete(m.byName, name)
		return
	}
	ix := m.byName[name]
	if ix == nil || !ix.content.Equal(base) {
		ix = &keyIndex{values: map[string][]string{}}
		runtime.EachMapEntry(base.String(), ix.add)
		if m.byName == nil {
			m.byName = map[string]*keyIndex{}
		}
		m.byName[name] = ix
	}
	for _, s := range e.Splices {
		ok := true
		runtime.EachMapEntry(base.Slice(s.Offset, s.Offset+s.Delete), func(k, v string) { ok = ix.remove(k, v) && ok })
		if !ok {
			delete(m.byName, name)
			return
		}
		runtime.EachMapEntry(s.Insert, ix.add)
	}
	ix.content = content
}

// lookup returns the file's entries of keys (its values by key) and whether a
// key has more than one entry.
func (m *mapKeys) lookup(name string, content bundle.Text, keys map[string]bool) (values map[string]string, dup bool) {
	values = make(map[string]string, len(keys))
	if ix := m.entries(name, content); ix != nil {
		for k := range keys {
			switch vs := ix.values[k]; len(vs) {
			case 0:
			case 1:
				values[k] = vs[0]
			default:
				dup = true
			}
		}
		return values, dup
	}
	for _, e := range runtime.MapFileEntriesFor(content.String(), keys) {
		_, seen := values[e.Key]
		dup = dup || seen
		values[e.Key] = e.Value
	}
	return values, dup
}

func (ix *keyIndex) add(key, value string) {
	ix.values[strings.Clone(key)] = append(ix.values[key], strings.Clone(value))
}

// remove takes one entry of key with value out; false when there is none.
func (ix *keyIndex) remove(key, value string) bool {
	vs := ix.values[key]
	for i, v := range vs {
		if v == value {
			if len(vs) == 1 {
				delete(ix.values, key)
			} else {
				ix.values[key] = append(vs[:i:i], vs[i+1:]...)
			}
			return true
		}
	}
	return false
}

// wholeLines reports whether each splice of e deletes whole lines of base and
// inserts whole lines (the last may end the file without a newline): then the
// entries of the result are base's, less those of the deleted lines, plus those
// of the inserted ones. Map lines never exceed HAProxy's read buffer here
// (checkMaps, editBases), so a line is what EachMapEntry reads as one.
func wholeLines(base bundle.Text, e agentapi.FileEdit) bool {
	newlineBefore := func(at int) bool { return base.Slice(at-1, at) == "\n" }
	for _, s := range e.Splices {
		end := s.Offset + s.Delete
		if s.Offset < 0 || end > base.Len() || s.Delete < 0 {
			return false
		}
		if s.Offset > 0 && !newlineBefore(s.Offset) {
			return false
		}
		if s.Delete > 0 && end < base.Len() && !newlineBefore(end) {
			return false
		}
		if s.Insert != "" && !strings.HasSuffix(s.Insert, "\n") && end < base.Len() {
			return false
		}
	}
	return true
}
