package node

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// PodProcesses returns the PIDs whose environment marks them as a container of
// a pod: HAPTIC_POD=<namespace>/<name> (every pod when podKey is empty, all pods
// of a namespace when podKey ends in "/").
func PodProcesses(podKey string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("read /proc: %w", err)
	}
	marker := []byte("HAPTIC_POD=" + podKey)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(environ, []byte{0}) {
			if !bytes.HasPrefix(kv, marker) {
				continue
			}
			if len(podKey) == 0 || podKey[len(podKey)-1] == '/' || len(kv) == len(marker) {
				pids = append(pids, pid)
			}
			break
		}
	}
	return pids, nil
}

// killOrphans ends container processes an earlier node left behind: the node
// cannot adopt them, and it restarts the pods it is given from scratch.
func killOrphans() error {
	pids, err := PodProcesses("")
	if err != nil {
		return err
	}
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return fmt.Errorf("read own netns: %w", err)
	}
	var mine []int
	for _, pid := range pids {
		// Only processes in this node's network namespace are its own.
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid)); err == nil && ns == self {
			mine = append(mine, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		alive := 0
		for _, pid := range mine {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d/environ", pid)); err == nil && !isZombie(pid) {
				alive++
			}
		}
		if alive == 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("container processes of an earlier node survived SIGKILL")
}

func isZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	closing := bytes.LastIndexByte(data, ')')
	return closing < 0 || closing+2 >= len(data) || data[closing+2] == 'Z'
}
