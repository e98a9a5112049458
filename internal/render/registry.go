package render

import (
	"fmt"
	"sort"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// PathResolver tells templates where a file will live on the HAProxy pods, so that
// haproxy.cfg can reference maps, files and certificates by absolute path.
type PathResolver struct{ layout bundle.Layout }

// GetPath returns the pod path of a file; kind is map, file, cert or crt-list.
func (p *PathResolver) GetPath(name, kind string) string {
	k := bundle.KindFile
	switch kind {
	case "map":
		k = bundle.KindMap
	case "cert", "crt", "crt-list", "crtlist":
		k = bundle.KindCert
	}
	return p.layout.Path(bundle.File{Kind: k, Name: name})
}

// GetBaseDir returns the directory of a kind of file.
func (p *PathResolver) GetBaseDir(kind string) string {
	switch kind {
	case "map":
		return p.layout.MapsDir
	case "cert", "crt", "crt-list", "crtlist":
		return p.layout.SSLCertsDir
	case "config":
		return p.layout.ConfigFile
	}
	return p.layout.GeneralStorageDir
}

// FileRegistry lets templates add files discovered while rendering, e.g. one PEM file
// per TLS Secret: fileRegistry.Register("cert", "ns_name.pem", pem) returns its path.
type FileRegistry struct {
	resolver *PathResolver
	st       *renderState // nil outside a render
	mu       sync.Mutex
	files    map[string]bundle.File
}

func newFileRegistry(r *PathResolver, st *renderState) *FileRegistry {
	return &FileRegistry{resolver: r, st: st, files: map[string]bundle.File{}}
}

// Register adds a file and returns its pod path. Registering the same name twice with
// different content fails the render: two objects would fight over one file.
func (f *FileRegistry) Register(kind, name, content string) string {
	var k bundle.Kind
	switch kind {
	case "cert":
		k = bundle.KindCert
	case "crt-list", "crtlist":
		k = bundle.KindCrtList
	case "map":
		k = bundle.KindMap
	case "file":
		k = bundle.KindFile
	default:
		panic(fmt.Sprintf("fileRegistry.Register: unknown kind %q (want cert, crt-list, map or file)", kind))
	}
	if !validFileName(name) {
		panic(fmt.Sprintf("fileRegistry.Register: %q is not a plain file name", name))
	}
	file := bundle.File{Kind: k, Name: name, Content: bundle.TextOf(content)}
	key := file.Target()
	if err := checkOutput(k, content); err != nil {
		panic(fmt.Sprintf("fileRegistry.Register: %s: %v", key, err))
	}
	f.put(file)
	if f.st != nil && f.st.rec != nil {
		d := &f.st.rec.top().deps
		d.files = append(d.files, file)
	}
	return f.resolver.layout.Path(file)
}

// put adds a checked file: registered now, or again by a reused fragment.
func (f *FileRegistry) put(file bundle.File) {
	key := file.Target()
	f.mu.Lock()
	defer f.mu.Unlock()
	if prev, ok := f.files[key]; ok && !prev.Content.Equal(file.Content) {
		panic(fmt.Sprintf("fileRegistry.Register: %s registered twice with different content", key))
	}
	f.files[key] = file
}

func (f *FileRegistry) list() []bundle.File {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]bundle.File, 0, len(f.files))
	for _, file := range f.files {
		out = append(out, file)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Target() < out[j].Target() })
	return out
}

func validFileName(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	for _, r := range name {
		ok := r == '.' || r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}
