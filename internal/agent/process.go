package agent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is the HAProxy master the agent supervises. It runs in its own process
// group (the master and its workers), so that stopping it reaches every worker.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // exit status, valid after done is closed
}

// startHAProxy starts `haproxy -W -S <master.sock> -f <config> -f <agent.cfg>` in the
// foreground (the master stays our child).
func startHAProxy(o *Options) (*process, error) {
	cmd := exec.Command(o.Binary, haproxyArgs(o)...)
	cmd.Dir = o.StateDir
	cmd.Stdout, cmd.Stderr = o.HAProxyOutput, o.HAProxyOutput
	// Pdeathsig stops HAProxy if the agent dies without stopping it (the workers
	// exit when their master does).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Binary, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func haproxyArgs(o *Options) []string {
	return []string{"-W", "-S", o.masterSocket() + ",mode,600", "-p", o.pidFile(),
		"-f", o.Layout.ConfigFile, "-f", o.agentConfig()}
}

func (p *process) pid() int { return p.cmd.Process.Pid }

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
	_ = syscall.Kill(-p.pid(), sig)
}

// stop soft-stops HAProxy (SIGUSR1: finish connections, hard-stop-after bounds it),
// then escalates to SIGTERM and SIGKILL of the whole group.
func (p *process) stop(timeout time.Duration) error {
	if p.exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGUSR1)
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
	return fmt.Errorf("haproxy master %d did not exit", p.pid())
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

// stopOrphan stops an HAProxy master left running by an earlier agent of the same
// state dir (its pid file names it and its command line names our master socket).
func stopOrphan(o *Options) error {
	data, err := os.ReadFile(o.pidFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("read pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return nil
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), o.masterSocket()) {
		return nil // gone, or the pid was reused by something else
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
