package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pidRecord identifies a started process: the start time (from /proc/PID/stat)
// guards against a PID reused by an unrelated process after a reboot or kill.
type pidRecord struct {
	PID       int
	StartTime string
}

// startInNetns starts argv inside the cluster's network namespace as a detached
// process (its own session), logging to logs/<name>.log, and records its PID.
// `ip netns exec` execs the command in place, so the PID is the command's own.
func startInNetns(cfg Config, name string, argv []string, env []string) (int, error) {
	if err := os.MkdirAll(cfg.LogDir(), 0o755); err != nil {
		return 0, fmt.Errorf("create log dir: %w", err)
	}
	if err := os.MkdirAll(cfg.RunDir(), 0o755); err != nil {
		return 0, fmt.Errorf("create run dir: %w", err)
	}
	logPath := filepath.Join(cfg.LogDir(), name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", logPath, err)
	}
	defer logFile.Close()
	cmd := exec.Command("ip", append([]string{"netns", "exec", cfg.Netns}, argv...)...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", name, err)
	}
	pid := cmd.Process.Pid
	record := pidRecord{PID: pid, StartTime: processStartTime(pid)}
	if err := writePIDFile(cfg, name, record); err != nil {
		_ = cmd.Process.Kill()
		return 0, err
	}
	// Reap the child if it exits while we still run; after we exit, init does.
	go func() { _ = cmd.Wait() }()
	return pid, nil
}

func pidFile(cfg Config, name string) string {
	return filepath.Join(cfg.RunDir(), name+".pid")
}

func writePIDFile(cfg Config, name string, r pidRecord) error {
	content := fmt.Sprintf("%d %s\n", r.PID, r.StartTime)
	if err := os.WriteFile(pidFile(cfg, name), []byte(content), 0o644); err != nil {
		return fmt.Errorf("write pid file for %s: %w", name, err)
	}
	return nil
}

// readPIDFile returns the record of a component, or ok=false if there is none.
func readPIDFile(cfg Config, name string) (pidRecord, bool) {
	data, err := os.ReadFile(pidFile(cfg, name))
	if err != nil {
		return pidRecord{}, false
	}
	fields := strings.Fields(string(data))
	if len(fields) < 1 {
		return pidRecord{}, false
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil || pid <= 0 {
		return pidRecord{}, false
	}
	r := pidRecord{PID: pid}
	if len(fields) > 1 {
		r.StartTime = fields[1]
	}
	return r, true
}

// alive reports whether the recorded process still runs (and is not a zombie).
func (r pidRecord) alive() bool {
	state, start := processState(r.PID)
	if state == "" || state == "Z" || state == "X" {
		return false
	}
	return r.StartTime == "" || r.StartTime == start
}

// processState reads the state letter and start time of a PID from /proc.
func processState(pid int) (state, startTime string) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", ""
	}
	// The command name is in parentheses and may contain spaces: parse after it.
	s := string(data)
	closing := strings.LastIndexByte(s, ')')
	if closing < 0 {
		return "", ""
	}
	fields := strings.Fields(s[closing+1:])
	if len(fields) < 20 {
		return "", ""
	}
	return fields[0], fields[19] // state (field 3), starttime (field 22)
}

func processStartTime(pid int) string {
	_, start := processState(pid)
	return start
}

// stopProcess sends SIGTERM, waits up to grace, then SIGKILLs and waits briefly.
func stopProcess(r pidRecord, grace time.Duration) error {
	if !r.alive() {
		return nil
	}
	if err := syscall.Kill(r.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %d: %w", r.PID, err)
	}
	if waitGone(r, grace) {
		return nil
	}
	if err := syscall.Kill(r.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %d: %w", r.PID, err)
	}
	if !waitGone(r, 5*time.Second) {
		return fmt.Errorf("process %d survived SIGKILL", r.PID)
	}
	return nil
}

func waitGone(r pidRecord, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !r.alive() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !r.alive()
}
