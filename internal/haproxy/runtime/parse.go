package runtime

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Process is one line of the master's `show proc`.
type Process struct {
	PID  int    `json:"pid"`
	Type string `json:"type"` // master, worker or program
	// Reloads is, for the master, how many reloads it performed; for a worker, how
	// many reloads happened since it was forked (0 = the current worker).
	Reloads int    `json:"reloads"`
	Uptime  string `json:"uptime"`
	Version string `json:"version,omitempty"`
}

// ProcList is the parsed `show proc` of the master CLI.
type ProcList struct {
	Master Process `json:"master"`
	// Failed is the master's "[failed: N]" counter: reloads that did not load.
	Failed  int       `json:"failed"`
	Workers []Process `json:"workers"`
}

// Current returns the current worker: the one forked by the latest successful load
// (reloads 0), or false when there is none.
func (p ProcList) Current() (Process, bool) {
	for _, w := range p.Workers {
		if w.Reloads == 0 {
			return w, true
		}
	}
	return Process{}, false
}

var failedRe = regexp.MustCompile(`\[failed:\s*(\d+)\]`)

// ParseShowProc parses the master CLI's `show proc` output (HAProxy 2.6 layout).
func ParseShowProc(out string) (ProcList, error) {
	var pl ProcList
	section := "master"
	sawMaster := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "#<PID>"):
			continue
		case strings.HasPrefix(line, "#"):
			section = strings.TrimSpace(strings.TrimPrefix(line, "#"))
			continue
		}
		failed := -1
		if m := failedRe.FindStringSubmatch(line); m != nil {
			failed, _ = strconv.Atoi(m[1])
			line = strings.Replace(line, m[0], "", 1)
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			return pl, fmt.Errorf("show proc: malformed line %q", sc.Text())
		}
		pid, err1 := strconv.Atoi(f[0])
		reloads, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			return pl, fmt.Errorf("show proc: malformed line %q", sc.Text())
		}
		p := Process{PID: pid, Type: f[1], Reloads: reloads, Uptime: f[3]}
		if len(f) > 4 {
			p.Version = f[4]
		}
		switch {
		case p.Type == "master":
			pl.Master, sawMaster = p, true
			if failed >= 0 {
				pl.Failed = failed
			}
		case section == "workers" || p.Type == "worker":
			pl.Workers = append(pl.Workers, p)
		}
	}
	if !sawMaster {
		return pl, fmt.Errorf("show proc: no master line in %q", truncate(out, 200))
	}
	return pl, nil
}

// Info is the parsed `show info` of a worker.
type Info struct {
	Version string `json:"version"`
	PID     int    `json:"pid"`
	// Fields holds every "Name: value" line.
	Fields map[string]string `json:"-"`
}

// ParseShowInfo parses `show info`.
func ParseShowInfo(out string) (Info, error) {
	info := Info{Fields: map[string]string{}}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		info.Fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	info.Version = info.Fields["Version"]
	if info.Version == "" {
		return info, fmt.Errorf("show info: no Version in %q", truncate(out, 200))
	}
	pid, err := strconv.Atoi(info.Fields["Pid"])
	if err != nil {
		return info, fmt.Errorf("show info: bad Pid %q", info.Fields["Pid"])
	}
	info.PID = pid
	return info, nil
}

// ServerState is one server of `show servers state`.
type ServerState struct {
	Backend string `json:"backend"`
	Server  string `json:"server"`
	Address string `json:"address"`
	Port    int    `json:"port"`
	// OpState is srv_op_state: 0 stopped, 1 starting, 2 running, 3 stopping.
	OpState int `json:"opState"`
	// AdminState is srv_admin_state, a bit field (0x01/0x20 forced maintenance,
	// 0x08 drain...); non-zero means administratively changed.
	AdminState int `json:"adminState"`
	Weight     int `json:"weight"`
	// Fields holds every column by its header name.
	Fields map[string]string `json:"-"`
}

// ParseServersState parses `show servers state` (format version 1).
func ParseServersState(out string) ([]ServerState, error) {
	var header []string
	var servers []ServerState
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case i == 0 && !strings.HasPrefix(line, "#"):
			if _, err := strconv.Atoi(line); err != nil {
				// Not a format version: HAProxy's error ("Can't find backend.").
				return nil, fmt.Errorf("show servers state: %s", truncate(line, 200))
			}
			if line != "1" {
				return nil, fmt.Errorf("show servers state: unsupported format version %q", line)
			}
			continue
		case strings.HasPrefix(line, "#"):
			header = strings.Fields(strings.TrimPrefix(line, "#"))
			continue
		}
		if header == nil {
			return nil, fmt.Errorf("show servers state: row before header: %q", line)
		}
		cols := strings.Fields(line)
		if len(cols) != len(header) {
			return nil, fmt.Errorf("show servers state: %d columns, header has %d: %q", len(cols), len(header), line)
		}
		s := ServerState{Fields: make(map[string]string, len(cols))}
		for j, h := range header {
			s.Fields[h] = cols[j]
		}
		s.Backend, s.Server, s.Address = s.Fields["be_name"], s.Fields["srv_name"], s.Fields["srv_addr"]
		s.Port, _ = strconv.Atoi(s.Fields["srv_port"])
		s.OpState, _ = strconv.Atoi(s.Fields["srv_op_state"])
		s.AdminState, _ = strconv.Atoi(s.Fields["srv_admin_state"])
		s.Weight, _ = strconv.Atoi(s.Fields["srv_uweight"])
		servers = append(servers, s)
	}
	return servers, nil
}

// MapEntry is one key/value of a map.
type MapEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ParseShowMap parses `show map <file>` ("0x55.. key value" lines). Keys with blanks
// cannot be told from values in this output; the first blank splits them.
func ParseShowMap(out string) ([]MapEntry, error) {
	var entries []MapEntry
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		ptr, rest, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(ptr, "0x") {
			return nil, fmt.Errorf("show map: unexpected line %q", line)
		}
		k, v, _ := strings.Cut(rest, " ")
		entries = append(entries, MapEntry{Key: k, Value: v})
	}
	return entries, nil
}

// MapInfo is one map of the `show map` listing.
type MapInfo struct {
	ID      string `json:"id"`
	File    string `json:"file"`
	CurrVer int    `json:"currVer"`
	NextVer int    `json:"nextVer"`
	Entries int    `json:"entries"`
}

var (
	mapListRe = regexp.MustCompile(`^(-?\d+) \(([^)]*)\)`)
	mapVerRe  = regexp.MustCompile(`curr_ver=(\d+) next_ver=(\d+) entry_cnt=(\d+)`)
)

// ParseMapList parses `show map` without arguments.
func ParseMapList(out string) ([]MapInfo, error) {
	var maps []MapInfo
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := mapListRe.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("show map: unexpected line %q", line)
		}
		mi := MapInfo{ID: m[1], File: m[2]}
		if v := mapVerRe.FindStringSubmatch(line); v != nil {
			mi.CurrVer, _ = strconv.Atoi(v[1])
			mi.NextVer, _ = strconv.Atoi(v[2])
			mi.Entries, _ = strconv.Atoi(v[3])
		}
		maps = append(maps, mi)
	}
	return maps, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
