package runtime

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Admin state bits of srv_admin_state (HAProxy's SRV_ADMF_*).
const (
	AdminForcedMaint    = 0x01 // set server state maint / disable server
	AdminInheritedMaint = 0x02 // maintenance inherited from a tracked server
	AdminConfigMaint    = 0x04 // "disabled" on the server line
	AdminForcedDrain    = 0x08 // set server state drain
	AdminInheritedDrain = 0x10
	AdminResolverMaint  = 0x20 // address resolution failed
	AdminHealthMaint    = 0x40 // maintenance from a health check (agent)

	adminMaintMask = AdminForcedMaint | AdminInheritedMaint | AdminConfigMaint | AdminResolverMaint | AdminHealthMaint
)

// Maint reports whether the server is in maintenance for any reason.
func (s ServerState) Maint() bool { return s.AdminState&adminMaintMask != 0 }

// ShowServersState reads `show servers state <backend>` from a worker's stats socket.
// An unknown backend is an error carrying HAProxy's reply.
func ShowServersState(ctx context.Context, x Execer, backend string) ([]ServerState, error) {
	if backend != "" && !nameRe.MatchString(backend) {
		return nil, fmt.Errorf("show servers state: invalid backend name %q", backend)
	}
	out, err := x.Do(ctx, "show servers state "+backend)
	if err != nil {
		return nil, fmt.Errorf("show servers state %s: %w", backend, err)
	}
	servers, err := ParseServersState(out)
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", backend, err)
	}
	return servers, nil
}

// ShowMap reads `show map <path>` (path as HAProxy loaded the map) from a worker's
// stats socket. An unknown map is an error carrying HAProxy's reply.
func ShowMap(ctx context.Context, x Execer, path string) ([]MapEntry, error) {
	if strings.HasSuffix(path, payloadMarker) {
		return nil, fmt.Errorf("show map: invalid map path %q", path)
	}
	out, err := x.Do(ctx, "show map "+Escape(path))
	if err != nil {
		return nil, fmt.Errorf("show map %s: %w", path, err)
	}
	entries, err := ParseShowMap(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}

// MapDiff is how a running map differs from the wanted entries, compared as
// multisets: entry order is not compared (runtime additions are appended, so a map
// changed at runtime lists its entries in another order than the file; for a map
// lookup only the first entry of a key counts, and map files hold unique keys).
type MapDiff struct {
	Missing []MapEntry `json:"missing,omitempty"` // wanted, not running
	Extra   []MapEntry `json:"extra,omitempty"`   // running, not wanted
}

// Empty reports whether the running map holds exactly the wanted entries.
func (d MapDiff) Empty() bool { return len(d.Missing) == 0 && len(d.Extra) == 0 }

// String summarizes the difference ("2 missing (a.test be_a, ...), 1 extra (...)").
func (d MapDiff) String() string {
	var parts []string
	for _, side := range []struct {
		name    string
		entries []MapEntry
	}{{"missing", d.Missing}, {"extra", d.Extra}} {
		if len(side.entries) == 0 {
			continue
		}
		var ex []string
		for i, e := range side.entries {
			if i == 3 {
				ex = append(ex, "...")
				break
			}
			ex = append(ex, truncate(e.Key+" "+e.Value, 100))
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", len(side.entries), side.name, strings.Join(ex, ", ")))
	}
	if len(parts) == 0 {
		return "equal"
	}
	return strings.Join(parts, ", ")
}

// DiffMap compares the running entries with the wanted ones as multisets; both
// result lists are sorted by key, then value. Entries whose "key value" is longer
// than MaxShowMapEntry are left out on both sides: `show map` may not print them
// (only a map file line longer than config.MaxMapLine loads one;
// config.CheckMapFile refuses those).
func DiffMap(want, running []MapEntry) MapDiff {
	want, running = showable(want), showable(running)
	count := make(map[MapEntry]int, len(want))
	for _, e := range want {
		count[e]++
	}
	var d MapDiff
	for _, e := range running {
		if count[e] > 0 {
			count[e]--
			continue
		}
		d.Extra = append(d.Extra, e)
	}
	for _, e := range want {
		if count[e] > 0 {
			count[e]--
			d.Missing = append(d.Missing, e)
		}
	}
	sortEntries(d.Missing)
	sortEntries(d.Extra)
	return d
}

func sortEntries(es []MapEntry) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].Key != es[j].Key {
			return es[i].Key < es[j].Key
		}
		return es[i].Value < es[j].Value
	})
}

// showable returns the entries `show map` always prints (see MaxShowMapEntry).
func showable(entries []MapEntry) []MapEntry {
	for i, e := range entries {
		if len(e.Key)+1+len(e.Value) > MaxShowMapEntry {
			out := append([]MapEntry{}, entries[:i]...)
			for _, e := range entries[i+1:] {
				if len(e.Key)+1+len(e.Value) <= MaxShowMapEntry {
					out = append(out, e)
				}
			}
			return out
		}
	}
	return entries
}
