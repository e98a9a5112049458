package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// readBundleDir reads back a bundle that `haptic render -o DIR` wrote: the files
// under DIR at the layout's paths (DIR/etc/haproxy/haproxy.cfg, maps, general files,
// certificates and crt-lists), with the references to DIR that render put into the
// files turned back into the layout's own paths, so that the result equals the
// rendered bundle.
//
// Every regular file directly in a layout directory belongs to the bundle
// (subdirectories are skipped: render writes plain names only). Certificates and
// crt-lists share a directory; a file holding a PEM block is a certificate, any
// other one a crt-list.
func readBundleDir(dir string, l bundle.Layout) (*bundle.Bundle, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle dir %s: %w", dir, err)
	}
	root := l.Rebase(abs)
	cfg, err := os.ReadFile(root.ConfigFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("bundle dir %s: no %s (a directory written by 'haptic render -o DIR'; pass -f with the config that rendered it when its dataplane paths are not the defaults)",
			dir, strings.TrimPrefix(l.ConfigFile, "/"))
	} else if err != nil {
		return nil, fmt.Errorf("bundle dir %s: %w", dir, err)
	}
	files := []bundle.File{{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(string(cfg))}}
	seen := map[string]bool{root.ConfigFile: true}
	for _, d := range []struct {
		path string
		kind func(content string) bundle.Kind
	}{
		{root.MapsDir, func(string) bundle.Kind { return bundle.KindMap }},
		{root.SSLCertsDir, sslKind},
		{root.GeneralStorageDir, func(string) bundle.Kind { return bundle.KindFile }},
	} {
		entries, err := os.ReadDir(d.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("bundle dir %s: %w", dir, err)
		}
		for _, e := range entries {
			p := filepath.Join(d.path, e.Name())
			if !e.Type().IsRegular() || seen[p] {
				continue
			}
			seen[p] = true
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("bundle dir %s: %w", dir, err)
			}
			files = append(files, bundle.File{Kind: d.kind(string(data)), Name: e.Name(), Content: bundle.TextOf(string(data))})
		}
	}
	b := bundle.New(files).Relocate(root, l)
	// render writes references with the directory as it was given; a relative one
	// is relocated too (after the absolute one, which contains it).
	if rel := filepath.Clean(dir); !filepath.IsAbs(rel) && rel != "." {
		b = b.Relocate(l.Rebase(rel), l)
	}
	return b, nil
}

// sslKind tells a certificate (PEM) from a crt-list (lines of paths and options).
func sslKind(content string) bundle.Kind {
	if strings.Contains(content, "-----BEGIN ") {
		return bundle.KindCert
	}
	return bundle.KindCrtList
}
