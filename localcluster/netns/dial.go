package netns

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Path returns the bind-mount path `ip netns` uses for the named namespace.
func Path(name string) string {
	return filepath.Join("/run/netns", name)
}

// Dialer dials TCP connections from inside a named network namespace.
type Dialer struct {
	// Name is the namespace name as known to `ip netns`.
	Name string
	// Timeout bounds one dial; zero means 10 seconds.
	Timeout time.Duration
}

type dialResult struct {
	conn net.Conn
	err  error
}

// DialContext dials network/address from inside the namespace.
func (d Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	timeout := d.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	results := make(chan dialResult, 1)
	go func() {
		// Never unlocked: the thread changed namespace and must not be reused.
		runtime.LockOSThread()
		conn, err := dialInside(ctx, d.Name, network, address, timeout)
		results <- dialResult{conn: conn, err: err}
	}()
	select {
	case r := <-results:
		return r.conn, r.err
	case <-ctx.Done():
		go func() { // close a connection that completes after we gave up
			if r := <-results; r.conn != nil {
				r.conn.Close()
			}
		}()
		return nil, fmt.Errorf("dial %s in netns %s: %w", address, d.Name, ctx.Err())
	}
}

func dialInside(ctx context.Context, name, network, address string, timeout time.Duration) (net.Conn, error) {
	if err := Enter(name); err != nil {
		return nil, err
	}
	dialer := net.Dialer{Timeout: timeout}
	conn, err := dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("dial %s in netns %s: %w", address, name, err)
	}
	return conn, nil
}

// Enter moves the calling OS thread into the named namespace. The caller must
// have locked the goroutine to its thread and must not unlock it afterwards.
func Enter(name string) error {
	f, err := os.Open(Path(name))
	if err != nil {
		return fmt.Errorf("open netns %s: %w", name, err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns %s: %w", name, err)
	}
	return nil
}

// HTTPClient returns an HTTP client whose connections are opened inside the
// namespace. tlsTransport, when non-nil, is cloned and given the namespace
// dialer; otherwise a plain transport is used.
func HTTPClient(name string, tlsTransport *http.Transport, timeout time.Duration) *http.Client {
	transport := &http.Transport{}
	if tlsTransport != nil {
		transport = tlsTransport.Clone()
	}
	transport.DialContext = Dialer{Name: name}.DialContext
	transport.Proxy = nil
	return &http.Client{Transport: transport, Timeout: timeout}
}

// Exists reports whether the named namespace is present.
func Exists(name string) bool {
	_, err := os.Stat(Path(name))
	return err == nil
}

// Inode returns the inode of the namespace, which identifies it in /proc/PID/ns/net.
func Inode(name string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(Path(name), &st); err != nil {
		return 0, fmt.Errorf("stat netns %s: %w", name, err)
	}
	return st.Ino, nil
}

// Listen opens a listener inside the namespace: a socket keeps the namespace it
// was created in, so the listener serves connections made inside the namespace
// (e.g. the API server calling an admission webhook on 127.0.0.1) from any thread.
func Listen(name, network, address string) (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	results := make(chan result, 1)
	go func() {
		// Never unlocked: the thread changed namespace and must not be reused.
		runtime.LockOSThread()
		if err := Enter(name); err != nil {
			results <- result{err: err}
			return
		}
		ln, err := net.Listen(network, address)
		if err != nil {
			err = fmt.Errorf("listen %s in netns %s: %w", address, name, err)
		}
		results <- result{ln: ln, err: err}
	}()
	r := <-results
	return r.ln, r.err
}
