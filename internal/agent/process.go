package agent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is the HAProxy master the agent supervises. It runs in its own process
// group (the master and its workers), so that stopping it reaches every worker.
// It is the agent's child, or a master an earlier agent process started and this
// one adopted (adopt.go), which it watches through /proc.
type process struct {
	pid  int
	done chan struct{}
	err  error // exit status, valid after done is closed
}

// startHAProxy starts `haproxy -W -S <master.sock> -f <config> -f <agent.cfg>` in the
// foreground (the master stays our child). HAProxy outlives the agent process on
// purpose — no parent-death signal —, so that an agent that exits or is killed
// leaves the data plane serving and its successor adopts the master; the agent
// stops HAProxy itself when it is asked to stop (SIGTERM).
func startHAProxy(o *Options) (*process, error) {
	cmd := exec.Command(o.Binary, haproxyArgs(o)...)
	cmd.Dir = o.StateDir
	if o.HAProxyOutput != io.Discard {
		cmd.Stdout, cmd.Stderr = o.HAProxyOutput, o.HAProxyOutput
	} // else /dev/null: a pipe would break when the agent exits
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Binary, err)
	}
	p := &process{pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// watchProcess returns the process of a master that is not our child: its exit
// is seen by polling /proc (its status is not ours to read).
func watchProcess(pid int) *process {
	p := &process{pid: pid, done: make(chan struct{})}
	go func() {
		for alive(pid) {
			time.Sleep(100 * time.Millisecond)
		}
		p.err = errors.New("adopted master exited")
		close(p.done)
	}()
	return p
}

func haproxyArgs(o *Options) []string {
	return []string{"-W", "-S", o.masterSocket() + ",mode,600", "-p", o.pidFile(),
		"-f", o.Layout.ConfigFile, "-f", o.agentConfig()}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signalGroup signals the master and every worker.
func (p *process) signalGroup(sig syscall.Signal) {
	_ = syscall.Kill(-p.pid, sig)
}

// stop soft-stops HAProxy (SIGUSR1: finish connections, hard-stop-after bounds it),
// then escalates to SIGTERM and SIGKILL of the whole group.
func (p *process) stop(timeout time.Duration) error {
	if p.exited() {
		return nil
	}
	_ = syscall.Kill(p.pid, syscall.SIGUSR1)
	if p.wait(timeout) {
		return nil
	}
	p.signalGroup(syscall.SIGTERM)
	if p.wait(2 * time.Second) {
		return nil
	}
	p.signalGroup(syscall.SIGKILL)
	if p.wait(5 * time.Second) {
		return nil
	}
	return fmt.Errorf("haproxy master %d did not exit", p.pid)
}

// kill stops the whole group at once (SIGKILL).
func (p *process) kill() {
	p.signalGroup(syscall.SIGKILL)
	p.wait(5 * time.Second)
}

func (p *process) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// runningMaster returns the PID of an HAProxy master started for this state dir
// that still runs: its pid file names it and its command line names our master
// socket (else the PID was reused by something else).
func runningMaster(o *Options) (int, bool, error) {
	data, err := os.ReadFile(o.pidFile())
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	} else if err != nil {
		return 0, false, fmt.Errorf("read pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return 0, false, nil
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), o.masterSocket()) || !alive(pid) {
		return 0, false, nil
	}
	return pid, true, nil
}

// stopOrphan stops an HAProxy master left running by an earlier agent of the same
// state dir that could not be adopted.
func stopOrphan(o *Options) error {
	pid, ok, err := runningMaster(o)
	if err != nil || !ok {
		return err
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		_ = syscall.Kill(-pid, sig)
		_ = syscall.Kill(pid, sig)
		for i := 0; i < 50; i++ {
			if !alive(pid) {
				return nil
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return fmt.Errorf("stop orphaned haproxy master %d: still running", pid)
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}
