package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Image names map to local commands. The key is the image's last path element
// without tag or digest, so "registry.k8s.io/gateway-api/echo-basic:v1.5.1" and
// "echo-basic" both map to "echo-basic".
//
//	image name   runs                                         from
//	echo-basic   Gateway API conformance echo server          <cache>/echo-basic-<Gateway API version>
//	haproxy      haptic-agent (which drives HAProxy)           <bin>/haptic-agent
//	haptic       the HAPTIC controller                        <bin>/haptic
//	coredns      CoreDNS                                      <cache>/coredns
//	busybox, debian, alpine, ubuntu
//	             no entrypoint: the container's command runs from the host's PATH
//
// <cache> is the version-keyed binary cache (make cluster-binaries), <bin> the
// repository's bin/ directory.
// EchoBasicBinary is echo-basic's file in the cache, named after the Gateway API
// release it is built from (localcluster/echobin): clusters of checkouts pinned to
// other releases keep their own echo-basic beside it in the shared cache.
const EchoBasicBinary = "echo-basic-v1.6.3"

type imageEntry struct {
	// location says which directory holds binary; empty for host images.
	location string
	binary   string
}

const (
	inCache = "cache"
	inBin   = "bin"
)

var imageTable = map[string]imageEntry{
	"echo-basic": {location: inCache, binary: EchoBasicBinary},
	"haproxy":    {location: inBin, binary: "haptic-agent"},
	"haptic":     {location: inBin, binary: "haptic"},
	"coredns":    {location: inCache, binary: "coredns"},
	"busybox":    {},
	"debian":     {},
	"alpine":     {},
	"ubuntu":     {},
}

// ImageName strips registry, repository path, tag and digest from an image reference.
func ImageName(image string) string {
	name := image
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	return name
}

// Dirs says where mapped binaries live, and where image table files add to or
// override the built-in table (see imagetable.go).
type Dirs struct {
	Cache string // version-keyed binary cache
	Bin   string // the repository's bin/
	// ImageTables are image table files (haptic-cluster node --images).
	ImageTables []string
	// ImageTableDir holds more table files (*.yaml, *.json), read at every
	// container start: a file dropped there maps an image without restarting
	// the node.
	ImageTableDir string
}

// waitingError is a reason a container cannot start yet, shown as its Waiting state.
type waitingError struct {
	Reason  string
	Message string
}

func (e *waitingError) Error() string { return e.Reason + ": " + e.Message }

// ResolveArgv turns an image, command and args into the argv to execute.
// Like a container runtime: command replaces the image's entrypoint, args
// follow it. A command whose first word names the mapped binary (or any path
// ending in it) runs the mapped binary; any other command is looked up on the
// host (absolute path or PATH).
func ResolveArgv(dirs Dirs, image string, command, args []string) ([]string, error) {
	argv, _, err := ResolveImage(dirs, image, command, args, nil)
	return argv, err
}

// ResolveImage is ResolveArgv with the image table files: an image they name
// resolves by its entry there (ahead of the built-in table), and extraEnv holds
// the entry's environment defaults that containerEnv ("K=V") does not set.
func ResolveImage(dirs Dirs, image string, command, args, containerEnv []string) (argv, extraEnv []string, err error) {
	name := ImageName(image)
	if len(dirs.ImageTables) > 0 || dirs.ImageTableDir != "" {
		table, err := LoadImageTables(dirs.ImageTables, dirs.ImageTableDir)
		if err != nil {
			return nil, nil, &waitingError{Reason: "ImageTableInvalid", Message: err.Error()}
		}
		if entry, ok := table[name]; ok {
			return resolveFromTable(dirs, entry, image, command, args, containerEnv)
		}
	}
	argv, err = resolveBuiltin(dirs, image, command, args)
	return argv, nil, err
}

// resolveBuiltin resolves an image with the built-in table.
func resolveBuiltin(dirs Dirs, image string, command, args []string) ([]string, error) {
	name := ImageName(image)
	entry, ok := imageTable[name]
	if !ok {
		return nil, &waitingError{Reason: "ImageNotMapped",
			Message: fmt.Sprintf("image %q (name %q) has no local command; see localcluster/node/images.go, or map it in an image table (localcluster/README.md)", image, name)}
	}
	mapped := ""
	if entry.binary != "" {
		dir := dirs.Cache
		if entry.location == inBin {
			dir = dirs.Bin
		}
		mapped = filepath.Join(dir, entry.binary)
		if _, err := os.Stat(mapped); err != nil {
			return nil, &waitingError{Reason: "BinaryNotBuilt",
				Message: fmt.Sprintf("image %q maps to %s, which does not exist yet (build it: make build / make cluster-binaries)", image, mapped)}
		}
	}
	if len(command) == 0 {
		if mapped == "" {
			return nil, &waitingError{Reason: "NoCommand", Message: fmt.Sprintf("image %q has no entrypoint: set command", image)}
		}
		return append([]string{mapped}, args...), nil
	}
	first := command[0]
	// (the image's name counts too: an image's own command names "echo-basic",
	// not the cache file named after its release)
	if mapped != "" && (filepath.Base(first) == entry.binary || filepath.Base(first) == name) {
		first = mapped
	}
	return append(append([]string{first}, command[1:]...), args...), nil
}
