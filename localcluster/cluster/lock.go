package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// FileLock is an flock(2) lock; the kernel drops it when the process dies, so a
// killed run never leaves a stale lock behind.
type FileLock struct {
	f *os.File
}

// Lock takes an exclusive (or shared) lock on StateDir/name, blocking until it
// is free. Up and Down serialize on "up.lock"; test processes using the
// cluster hold "users.lock" shared (see clustertest).
func Lock(cfg Config, name string, shared bool) (*FileLock, error) {
	return lock(cfg, name, shared, true)
}

// TryLock is Lock without blocking; ok is false when another process holds it.
func TryLock(cfg Config, name string) (l *FileLock, ok bool, err error) {
	l, err = lock(cfg, name, false, false)
	if err == syscall.EWOULDBLOCK {
		return nil, false, nil
	}
	return l, err == nil, err
}

func lock(cfg Config, name string, shared, block bool) (*FileLock, error) {
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	path := filepath.Join(cfg.StateDir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
	}
	if !block {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, err
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &FileLock{f: f}, nil
}

// Unlock releases the lock.
func (l *FileLock) Unlock() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
