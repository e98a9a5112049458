package agent

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
	"github.com/haproxy-haptic/haptic/internal/haproxy/runtime"
)

// manifest lists the files of the current set; it is how the agent knows, after a
// restart, which files on disk belong to the set (and of which kind).
type manifest struct {
	Hash  string    `json:"hash"`
	Files []fileRef `json:"files"`
	// Aliases are the controller's (RuntimeRequest.Aliases) for this set.
	Aliases map[string]string `json:"aliases,omitempty"`
}

type fileRef struct {
	Kind bundle.Kind `json:"kind"`
	Name string      `json:"name"`
}

func manifestOf(b *bundle.Bundle) manifest {
	m := manifest{Hash: b.Hash}
	for _, f := range b.Files {
		m.Files = append(m.Files, fileRef{Kind: f.Kind, Name: f.Name})
	}
	return m
}

// checkFiles rejects sets the agent cannot lay out safely: exactly one config file,
// known kinds, relative names without "..", no two files at the same path.
func checkFiles(l bundle.Layout, files []bundle.File) error {
	configs := 0
	seen := map[string]string{}
	for _, f := range files {
		switch f.Kind {
		case bundle.KindConfig:
			configs++
		case bundle.KindMap, bundle.KindFile, bundle.KindCert, bundle.KindCrtList:
			if f.Name == "" || filepath.IsAbs(f.Name) || filepath.Clean(f.Name) != f.Name ||
				f.Name == ".." || strings.HasPrefix(f.Name, "../") || strings.Contains(f.Name, "\x00") {
				return fmt.Errorf("file %s: unsafe name", f.Target())
			}
		default:
			return fmt.Errorf("file %q: unknown kind %q", f.Name, f.Kind)
		}
		p := l.Path(f)
		if other, ok := seen[p]; ok {
			return fmt.Errorf("files %s and %s: same path %s", other, f.Target(), p)
		}
		seen[p] = f.Target()
	}
	if configs != 1 {
		return fmt.Errorf("file set needs exactly one config file, has %d", configs)
	}
	return nil
}

// checkMaps refuses map files that hold a line the runtime API cannot reproduce
// (config.CheckMapFile: a line over config.MaxMapLine bytes, a control character,
// an entry config.CheckMapEntry refuses), so that every map the agent installs can be
// verified against `show map` and corrected with runtime operations.
func checkMaps(files []bundle.File) error {
	for _, f := range files {
		if f.Kind != bundle.KindMap {
			continue
		}
		// The name must be one the map operations accept (no blank, ';', control
		// character or trailing "<<"): it ends `show map` and `commit map` commands.
		if err := (&runtime.ReplaceMap{Map: f.Name}).Validate(); err != nil {
			return fmt.Errorf("map file %q: the runtime API cannot name it", f.Name)
		}
		if err := config.CheckMapFile(f.Content.String()); err != nil {
			return fmt.Errorf("map file %s: %w", f.Name, err)
		}
	}
	return nil
}

// readTree rebuilds the bundle of the files m lists from what is on disk now.
func readTree(l bundle.Layout, m manifest) (*bundle.Bundle, error) {
	files := make([]bundle.File, 0, len(m.Files))
	for _, r := range m.Files {
		f := bundle.File{Kind: r.Kind, Name: r.Name}
		data, err := os.ReadFile(l.Path(f))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f.Target(), err)
		}
		f.Content = bundle.TextOf(string(data))
		files = append(files, f)
	}
	return bundle.New(files), nil
}

// install writes files into place: each is staged next to its target and renamed
// over it, so HAProxy never reads a half-written file. Then files of prev that are
// not in the new set are removed (pass nil to keep everything else).
func install(l bundle.Layout, files []bundle.File, prev []fileRef) error {
	staged := make(map[string]string, len(files)) // final path -> staged path
	cleanup := func() {
		for _, tmp := range staged {
			_ = os.Remove(tmp)
		}
	}
	for _, f := range files {
		p := l.Path(f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			cleanup()
			return fmt.Errorf("stage %s: %w", f.Target(), err)
		}
		tmp := filepath.Join(filepath.Dir(p), ".haptic-staged-"+randHex()+"-"+filepath.Base(p))
		mode := os.FileMode(0o644)
		if f.Kind == bundle.KindCert {
			mode = 0o600
		}
		if err := bundle.WriteFile(tmp, f.Content, mode); err != nil {
			cleanup()
			_ = os.Remove(tmp)
			return fmt.Errorf("stage %s: %w", f.Target(), err)
		}
		staged[p] = tmp
	}
	for p, tmp := range staged {
		if err := os.Rename(tmp, p); err != nil {
			cleanup()
			return fmt.Errorf("swap %s: %w", p, err)
		}
		delete(staged, p)
	}
	keep := make(map[string]bool, len(files))
	for _, f := range files {
		keep[l.Path(f)] = true
	}
	for _, r := range prev {
		p := l.Path(bundle.File{Kind: r.Kind, Name: r.Name})
		if keep[p] {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove stale %s: %w", p, err)
		}
	}
	return nil
}

func randHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeJSON writes v to path atomically, readable by the owner only (the last known
// good set contains certificates).
func writeJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return writeFileAtomic(path, data, 0o600)
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp-" + randHex()
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readJSON reads path into v; a missing file returns an error matching fs.ErrNotExist.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	return nil
}
