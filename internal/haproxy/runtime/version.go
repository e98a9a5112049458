package runtime

import (
	"fmt"
	"regexp"
	"strconv"
)

// Version is a parsed HAProxy version such as "2.6.12-1+deb12u4".
type Version struct {
	Major, Minor, Patch int
	Raw                 string
}

var versionNumRe = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?`)

// ParseVersion parses the leading major.minor[.patch] of an HAProxy version string
// (as `haproxy -v` or `show info` print it).
func ParseVersion(s string) (Version, error) {
	m := versionNumRe.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("parse haproxy version %q: no major.minor", s)
	}
	v := Version{Raw: s}
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		v.Patch, _ = strconv.Atoi(m[3])
	}
	return v, nil
}

// AtLeast reports whether v is major.minor or later.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// Capabilities are the runtime-API features a version offers.
type Capabilities struct {
	// RuntimeMaps: add/set/del map and prepare/commit map (1.9+).
	RuntimeMaps bool `json:"runtimeMaps"`
	// DynamicServers: add/del server without experimental mode (2.6+).
	DynamicServers bool `json:"dynamicServers"`
	// AddBackend: `add backend` (3.4+).
	AddBackend bool `json:"addBackend"`
	// SSLRuntime: new/set/commit ssl cert and crt-list edits (2.2+).
	SSLRuntime bool `json:"sslRuntime"`
}

// CapabilitiesOf returns what v supports.
func CapabilitiesOf(v Version) Capabilities {
	return Capabilities{
		RuntimeMaps:    v.AtLeast(1, 9),
		DynamicServers: v.AtLeast(2, 6),
		AddBackend:     v.AtLeast(3, 4),
		SSLRuntime:     v.AtLeast(2, 2),
	}
}
