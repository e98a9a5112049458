//go:build linux || darwin

package debug

import (
	"fmt"
	"syscall"
)

// freeSpace is the space available to an unprivileged writer in dir's filesystem.
func freeSpace(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil //nolint:unconvert // field types differ by OS
}
