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

// clusterMarker names the environment variable that ties a container process
// to its cluster (the cluster's netns name).
const clusterMarker = "HAPTIC_CLUSTER"

// KillClusterProcesses ends (SIGKILL) every container process of the cluster
// whose netns is clusterNetns: a node starting after an earlier one cannot
// adopt them, and `down` must leave nothing behind.
func KillClusterProcesses(clusterNetns string) error {
	return killOrphans(clusterNetns)
}

func killOrphans(clusterNetns string) error {
	pids, err := PodProcesses("")
	if err != nil {
		return err
	}
	want := []byte(clusterMarker + "=" + clusterNetns)
	var mine []int
	for _, pid := range pids {
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(environ, []byte{0}) {
			if bytes.Equal(kv, want) {
				mine = append(mine, pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
				break
			}
		}
	}
	if len(mine) == 0 {
		return nil
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		alive := 0
		for _, pid := range mine {
			if !isZombie(pid) {
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

// killPodLeftovers ends (SIGKILL) every process still marked with the pod's UID
// after its containers stopped, as a container runtime ends a pod's cgroups.
func killPodLeftovers(uid string) {
	killMarked("HAPTIC_POD_UID="+uid, "")
}

// killContainerLeftovers ends (SIGKILL) every process of one container — marked
// with the pod's UID and the container's name — once its main process exited: a
// daemon it started in a process group of its own (an HAProxy master a
// single-container agent started) dies with it, as the container's cgroup does in
// Kubernetes. Other containers of the pod are left alone. It waits (bounded) until
// they are gone, so a restarted container never meets its predecessor's processes.
func killContainerLeftovers(uid, container string) {
	pids := killMarked("HAPTIC_POD_UID="+uid, "HAPTIC_CONTAINER="+container)
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for !isZombie(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// killMarked SIGKILLs the container processes whose environment holds marker and,
// when also is set, also; it returns their PIDs.
func killMarked(marker, also string) []int {
	pids, err := PodProcesses("")
	if err != nil {
		return nil
	}
	var killed []int
	for _, pid := range pids {
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		hasMarker, hasAlso := false, also == ""
		for _, kv := range bytes.Split(environ, []byte{0}) {
			hasMarker = hasMarker || string(kv) == marker
			hasAlso = hasAlso || string(kv) == also
		}
		if hasMarker && hasAlso {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, pid)
		}
	}
	return killed
}
