package node

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// ImageCommand is one entry of an image table file: what a container of that
// image runs when its pod sets no command (the image's entrypoint), and the
// environment defaults the image would bake in.
type ImageCommand struct {
	// Command is the program and its leading arguments. "{cache}" and "{bin}"
	// in the program expand to the binary cache and the repository's bin/; an
	// empty Command makes a host image (the pod's command runs from the PATH).
	Command []string `json:"command,omitempty"`
	// Env holds defaults: a variable the container sets itself wins.
	Env map[string]string `json:"env,omitempty"`
}

// ImageTableFile is the file format (YAML or JSON):
//
//	images:
//	  hyper-server:                       # the image name: no registry, tag or digest
//	    command: ["{cache}/echo-basic-v1.6.3"]
//	    env: {HTTP_PORT: "8080"}
type ImageTableFile struct {
	Images map[string]ImageCommand `json:"images"`
}

// LoadImageTables reads image table files in order (a later file's entry for
// the same image wins) and then every *.yaml, *.yml and *.json file of dir in
// name order; a missing dir is no error.
func LoadImageTables(files []string, dir string) (map[string]ImageCommand, error) {
	paths := slices.Clone(files)
	if dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("image tables: %w", err)
		}
		var names []string
		for _, e := range entries {
			ext := filepath.Ext(e.Name())
			if !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			paths = append(paths, filepath.Join(dir, n))
		}
	}
	table := map[string]ImageCommand{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("image table: %w", err)
		}
		var f ImageTableFile
		if err := yaml.UnmarshalStrict(data, &f); err != nil {
			return nil, fmt.Errorf("image table %s: %w", p, err)
		}
		for name, c := range f.Images {
			if name == "" || strings.ContainsAny(name, "/:@") {
				return nil, fmt.Errorf("image table %s: %q is not an image name (no registry, tag or digest)", p, name)
			}
			table[name] = c
		}
	}
	return table, nil
}

// resolveFromTable resolves an image with a table entry, like ResolveArgv does
// for the built-in images; env holds the entry's defaults the container does
// not set itself.
func resolveFromTable(dirs Dirs, entry ImageCommand, image string, command, args, containerEnv []string) ([]string, []string, error) {
	var env []string
	set := map[string]bool{}
	for _, kv := range containerEnv {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	keys := make([]string, 0, len(entry.Env))
	for k := range entry.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !set[k] {
			env = append(env, k+"="+entry.Env[k])
		}
	}
	if len(entry.Command) == 0 { // host image
		if len(command) == 0 {
			return nil, nil, &waitingError{Reason: "NoCommand", Message: fmt.Sprintf("image %q has no entrypoint: set command", image)}
		}
		return append(slices.Clone(command), args...), env, nil
	}
	program := strings.NewReplacer("{cache}", dirs.Cache, "{bin}", dirs.Bin).Replace(entry.Command[0])
	if filepath.IsAbs(program) {
		if _, err := os.Stat(program); err != nil {
			return nil, nil, &waitingError{Reason: "BinaryNotBuilt",
				Message: fmt.Sprintf("image %q maps to %s, which does not exist", image, program)}
		}
	}
	if len(command) == 0 {
		return append(append([]string{program}, entry.Command[1:]...), args...), env, nil
	}
	first := command[0]
	if filepath.Base(first) == filepath.Base(program) {
		first = program
	}
	return append(append([]string{first}, command[1:]...), args...), env, nil
}
