package node

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// InitSpec is what `haptic-cluster container-init SPECFILE` reads: the mounts
// to set up in its fresh mount namespace and the command to exec afterwards.
type InitSpec struct {
	Argv    []string `json:"argv"`
	Env     []string `json:"env"`
	WorkDir string   `json:"workDir,omitempty"`
	Mounts  []Mount  `json:"mounts,omitempty"`
	// ScratchDir is a per-container directory for stashing mirrored ancestors.
	ScratchDir string `json:"scratchDir"`
}

// RunContainerInit runs in the process the node starts with CLONE_NEWNS (Go
// makes / private recursively in that case, so nothing propagates to the host).
// It sets up the mounts and execs the container's command; it returns only on error.
func RunContainerInit(specFile string) error {
	data, err := os.ReadFile(specFile)
	if err != nil {
		return fmt.Errorf("read init spec: %w", err)
	}
	var spec InitSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("parse init spec: %w", err)
	}
	if len(spec.Argv) == 0 {
		return fmt.Errorf("init spec has no command")
	}
	// Belt and braces: never let a mount propagate back to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	// The command is held open before the volumes are mounted: an emptyDir at /tmp
	// must not hide a binary the image table maps from a checkout under /tmp.
	held := holdProgram(spec.Argv[0], spec.Env)
	if err := setupMounts(spec); err != nil {
		return err
	}
	if spec.WorkDir != "" {
		if err := os.Chdir(spec.WorkDir); err != nil {
			return fmt.Errorf("chdir %s: %w", spec.WorkDir, err)
		}
	}
	program, err := lookPath(spec.Argv[0], spec.Env)
	if err != nil {
		if held == "" {
			return err
		}
		program = held
	}
	if err := unix.Exec(program, spec.Argv, spec.Env); err != nil {
		return fmt.Errorf("exec %s: %w", program, err)
	}
	return nil
}

// holdProgram resolves the command as the host sees it and opens it (O_PATH), so
// it can still be executed through /proc/self/fd when a mount covers its path;
// "" when it cannot be found before the mounts (it may come with a volume).
func holdProgram(name string, env []string) string {
	path, err := lookPath(name, env)
	if err != nil {
		return ""
	}
	fd, err := unix.Open(path, unix.O_PATH, 0)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("/proc/self/fd/%d", fd)
}

// lookPath resolves a command against the container's PATH.
func lookPath(name string, env []string) (string, error) {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			if err := os.Setenv("PATH", v); err != nil {
				return "", fmt.Errorf("set PATH: %w", err)
			}
		}
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("command %s: %w", name, err)
	}
	return path, nil
}

// setupMounts mounts volumes in path order, so a parent mount comes before the
// mounts beneath it. Sources are opened first (O_PATH) and bound through
// /proc/self/fd, so a tmpfs laid over one of their ancestors cannot hide them.
func setupMounts(spec InitSpec) error {
	mounts := append([]Mount(nil), spec.Mounts...)
	sort.SliceStable(mounts, func(i, j int) bool { return mounts[i].Target < mounts[j].Target })
	sources := make([]string, len(mounts))
	for i, m := range mounts {
		if m.Tmpfs {
			continue
		}
		fd, err := unix.Open(m.Source, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open mount source %s: %w", m.Source, err)
		}
		sources[i] = fmt.Sprintf("/proc/self/fd/%d", fd)
	}
	for i, m := range mounts {
		isDir := true
		if !m.Tmpfs {
			st, err := os.Stat(sources[i])
			if err != nil {
				return fmt.Errorf("stat mount source %s: %w", m.Source, err)
			}
			isDir = st.IsDir()
		}
		if err := ensureMountPoint(m.Target, isDir, filepath.Join(spec.ScratchDir, fmt.Sprintf("stash%d", i))); err != nil {
			return fmt.Errorf("mount point %s: %w", m.Target, err)
		}
		if err := mountOne(m, sources[i]); err != nil {
			return err
		}
	}
	return nil
}

func mountOne(m Mount, source string) error {
	if m.Tmpfs {
		if err := unix.Mount("tmpfs", m.Target, "tmpfs", 0, "mode=1777"); err != nil {
			return fmt.Errorf("mount tmpfs at %s: %w", m.Target, err)
		}
		return nil
	}
	if err := unix.Mount(source, m.Target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s at %s: %w", m.Source, m.Target, err)
	}
	if m.ReadOnly {
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		if err := unix.Mount("", m.Target, "", flags, ""); err != nil {
			return fmt.Errorf("remount %s read-only: %w", m.Target, err)
		}
	}
	return nil
}

// ensureMountPoint makes target exist inside this mount namespace without
// creating anything on the host: when a parent is missing, the nearest existing
// ancestor is mirrored into a tmpfs (its entries bound back in), and the
// missing directories are created in that tmpfs.
func ensureMountPoint(target string, isDir bool, stash string) error {
	if _, err := os.Lstat(target); err == nil {
		return nil
	}
	ancestor := filepath.Dir(target)
	for {
		if _, err := os.Stat(ancestor); err == nil {
			break
		}
		ancestor = filepath.Dir(ancestor)
	}
	resolved, err := filepath.EvalSymlinks(ancestor)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", ancestor, err)
	}
	if resolved == "/" {
		return fmt.Errorf("cannot create %s: only / exists above it", target)
	}
	if err := mirrorIntoTmpfs(resolved, stash); err != nil {
		return err
	}
	if isDir {
		return os.MkdirAll(target, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(target), err)
	}
	f, err := os.Create(target)
	if err != nil {
		return fmt.Errorf("create %s: %w", target, err)
	}
	return f.Close()
}

// mirrorIntoTmpfs lays a tmpfs over dir that shows the same entries (bind
// mounts of the originals, symlinks recreated), so new entries can be added.
func mirrorIntoTmpfs(dir, stash string) error {
	if err := os.MkdirAll(stash, 0o700); err != nil {
		return fmt.Errorf("create stash: %w", err)
	}
	if err := unix.Mount(dir, stash, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("stash %s: %w", dir, err)
	}
	fd, err := unix.Open(stash, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open stash: %w", err)
	}
	stashed := fmt.Sprintf("/proc/self/fd/%d", fd)
	entries, err := os.ReadDir(stashed)
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("mode=%o", st.Mode&0o7777)); err != nil {
		return fmt.Errorf("tmpfs over %s: %w", dir, err)
	}
	for _, e := range entries {
		if err := mirrorEntry(stashed, dir, e); err != nil {
			return err
		}
	}
	return nil
}

func mirrorEntry(stashed, dir string, e os.DirEntry) error {
	src := filepath.Join(stashed, e.Name())
	dst := filepath.Join(dir, e.Name())
	if e.Type()&os.ModeSymlink != 0 {
		link, err := os.Readlink(src)
		if err != nil {
			return fmt.Errorf("read link %s: %w", dst, err)
		}
		return os.Symlink(link, dst)
	}
	if e.IsDir() {
		if err := os.Mkdir(dst, 0o755); err != nil {
			return fmt.Errorf("mirror %s: %w", dst, err)
		}
	} else {
		f, err := os.Create(dst)
		if err != nil {
			return fmt.Errorf("mirror %s: %w", dst, err)
		}
		f.Close()
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s back: %w", dst, err)
	}
	return nil
}
