package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unsafe"
)

// Kind is the kind of a rendered file; it decides where the file lives on a pod.
type Kind string

// File kinds.
const (
	KindConfig  Kind = "config"
	KindMap     Kind = "map"
	KindFile    Kind = "file"
	KindCert    Kind = "cert"
	KindCrtList Kind = "crtlist"
)

// File is one rendered file.
type File struct {
	Kind    Kind   `json:"kind"`
	Name    string `json:"name"`
	Content Text   `json:"content"`
	Hash    string `json:"hash"`
}

// Equal reports whether f and g are the same file with the same content.
func (f File) Equal(g File) bool {
	return f.Kind == g.Kind && f.Name == g.Name && f.Hash == g.Hash && f.Content.Equal(g.Content)
}

// Target is how validation tests name a file: haproxy.cfg, map:<name>, file:<name>,
// cert:<name> or crtlist:<name>.
func (f File) Target() string {
	if f.Kind == KindConfig {
		return "haproxy.cfg"
	}
	return string(f.Kind) + ":" + f.Name
}

// Bundle is a complete rendered file set. Files are sorted by kind order, then name.
type Bundle struct {
	Files []File `json:"files"`
	// Hash identifies the whole file set; equal hashes mean identical content.
	Hash string `json:"hash"`
}

var kindOrder = map[Kind]int{KindConfig: 0, KindMap: 1, KindFile: 2, KindCert: 3, KindCrtList: 4}

// New builds a bundle and computes its hashes. The input slice is not modified.
func New(files []File) *Bundle {
	out := make([]File, len(files))
	copy(out, files)
	for i := range out {
		out[i].Hash = HashText(out[i].Content)
	}
	return assemble(out)
}

// Assemble builds a bundle from files whose Hash fields the caller computed
// (HashText) itself: the agent merging a few changed files into a large set
// hashes only those. Never pass files whose Hash came from elsewhere.
func Assemble(files []File) *Bundle {
	out := make([]File, len(files))
	copy(out, files)
	return assemble(out)
}

func assemble(out []File) *Bundle {
	sort.Slice(out, func(i, j int) bool {
		if kindOrder[out[i].Kind] != kindOrder[out[j].Kind] {
			return kindOrder[out[i].Kind] < kindOrder[out[j].Kind]
		}
		return out[i].Name < out[j].Name
	})
	h := sha256.New()
	for _, f := range out {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", f.Kind, f.Name, f.Hash)
	}
	return &Bundle{Files: out, Hash: hex.EncodeToString(h.Sum(nil))}
}

// HashContent is the content hash used for every file: the SHA-256 of a small
// content, the chunked hash of a large one (chunks.go). A large content's hash is
// remembered (hashcache.go): a rendered map is hashed again by plan and deploy.
func HashContent(s string) string { return HashText(TextOf(s)) }

// HashText is HashContent of a text.
func HashText(t Text) string {
	if t.Len() < hashCacheMin {
		s := t.String()
		sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(s), len(s)))
		return hex.EncodeToString(sum[:])
	}
	if e, ok := hashes.get(t.id()); ok {
		return e.hash
	}
	return remember(t, chunkOn(t, 0, nil))
}

// HashEdited is HashText(s) for s made from base (an edited file): when base's
// hash is remembered, only the chunks around the lines that differ are hashed.
func HashEdited(base, s Text) string {
	if s.Len() < hashCacheMin {
		return HashText(s)
	}
	if e, ok := hashes.get(s.id()); ok {
		return e.hash
	}
	b, ok := hashes.get(base.id()) // (only large contents are remembered)
	if !ok {
		return HashText(s)
	}
	return remember(s, chunkEdited(base, s, b.chunks))
}

func remember(s Text, chunks []chunkSum) string {
	h := chunkedHash(chunks)
	hashes.put(s.id(), &hashEntry{h, chunks})
	return h
}

// Config returns haproxy.cfg.
func (b *Bundle) Config() File {
	f, _ := b.Get("haproxy.cfg")
	return f
}

// Get returns the file a validation-test target names.
func (b *Bundle) Get(target string) (File, bool) {
	for _, f := range b.Files {
		if f.Target() == target {
			return f, true
		}
	}
	return File{}, false
}

// Layout says where each kind of file lives on an HAProxy pod.
type Layout struct {
	ConfigFile        string `json:"configFile"`
	MapsDir           string `json:"mapsDir"`
	SSLCertsDir       string `json:"sslCertsDir"`
	GeneralStorageDir string `json:"generalStorageDir"`
}

// Path is where f lives under the layout.
func (l Layout) Path(f File) string {
	switch f.Kind {
	case KindConfig:
		return l.ConfigFile
	case KindMap:
		return filepath.Join(l.MapsDir, f.Name)
	case KindCert, KindCrtList:
		return filepath.Join(l.SSLCertsDir, f.Name)
	default:
		return filepath.Join(l.GeneralStorageDir, f.Name)
	}
}

// Rebase returns the layout moved under root, e.g. for validating in a temp dir.
func (l Layout) Rebase(root string) Layout {
	return Layout{
		ConfigFile:        filepath.Join(root, l.ConfigFile),
		MapsDir:           filepath.Join(root, l.MapsDir),
		SSLCertsDir:       filepath.Join(root, l.SSLCertsDir),
		GeneralStorageDir: filepath.Join(root, l.GeneralStorageDir),
	}
}

// Relocate rewrites references to the from layout's directories into the to layout's,
// in every file. Templates render production paths; validation lays the bundle out
// elsewhere and needs the references to follow.
func (b *Bundle) Relocate(from, to Layout) *Bundle {
	r := strings.NewReplacer(
		from.ConfigFile, to.ConfigFile,
		from.MapsDir+"/", to.MapsDir+"/",
		from.SSLCertsDir+"/", to.SSLCertsDir+"/",
		from.GeneralStorageDir+"/", to.GeneralStorageDir+"/",
	)
	files := make([]File, len(b.Files))
	for i, f := range b.Files {
		f.Content = TextOf(r.Replace(f.Content.String()))
		files[i] = f
	}
	return New(files)
}

// ValidName reports whether a file name is a plain name that stays inside its
// directory; names arrive from templates and, on the agent, from the network.
func ValidName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}

// WriteTo writes every file at its layout path, creating directories.
func (b *Bundle) WriteTo(l Layout) error {
	for _, f := range b.Files {
		if f.Kind != KindConfig && !ValidName(f.Name) {
			return fmt.Errorf("write %s: not a plain file name", f.Target())
		}
		p := l.Path(f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", f.Target(), err)
		}
		mode := os.FileMode(0o644)
		if f.Kind == KindCert {
			mode = 0o600
		}
		if err := WriteFile(p, f.Content, mode); err != nil {
			return fmt.Errorf("write %s: %w", f.Target(), err)
		}
		// WriteFile keeps an existing file's mode; a certificate must not stay readable.
		if err := os.Chmod(p, mode); err != nil {
			return fmt.Errorf("write %s: %w", f.Target(), err)
		}
	}
	return nil
}

// WriteFile is os.WriteFile of a text, written piece by piece (a map is megabytes).
func WriteFile(path string, t Text, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = t.WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
