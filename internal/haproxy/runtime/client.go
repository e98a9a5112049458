package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout bounds one command when neither the context nor the Client sets a
// deadline.
const DefaultTimeout = 10 * time.Second

// Client talks to one HAProxy CLI socket (the master socket or a worker's stats
// socket) in non-interactive mode: one connection per command line, the reply is
// read until HAProxy closes the connection.
type Client struct {
	// Path is the unix socket path.
	Path string
	// Timeout bounds one command (dial, write, read); DefaultTimeout when zero.
	Timeout time.Duration
	// RetryFor keeps retrying the dial while the socket refuses connections (the
	// master refuses them while it re-parses the configuration during a reload) or
	// does not exist yet, for at most this long. Zero means no retry.
	RetryFor time.Duration
}

// Do sends one command line (several commands may be joined with ';') and returns
// HAProxy's reply.
func (c *Client) Do(ctx context.Context, command string) (string, error) {
	if strings.ContainsAny(command, "\n\r\x00") {
		return "", fmt.Errorf("cli %q: command contains a newline or NUL", firstWord(command))
	}
	return c.do(ctx, command, func(w io.Writer) error {
		_, err := io.WriteString(w, command+"\n")
		return err
	})
}

// do sends what write writes on a new connection and reads the reply.
func (c *Client) do(ctx context.Context, command string, write func(io.Writer) error) (string, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+c.RetryFor)
	defer cancel()
	conn, err := c.dial(ctx)
	if err != nil {
		return "", fmt.Errorf("cli %q on %s: %w", firstWord(command), c.Path, err)
	}
	defer conn.Close()
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return "", fmt.Errorf("cli %q: set deadline: %w", firstWord(command), err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if err := write(conn); err != nil {
		return "", fmt.Errorf("cli %q: write: %w", firstWord(command), err)
	}
	// The master CLI only closes the connection once it sees our end closed.
	if uc, ok := conn.(*net.UnixConn); ok {
		if err := uc.CloseWrite(); err != nil {
			return "", fmt.Errorf("cli %q: close write: %w", firstWord(command), err)
		}
	}
	out, err := io.ReadAll(conn)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return string(out), fmt.Errorf("cli %q: read: %w", firstWord(command), err)
	}
	return string(out), nil
}

// dial connects, retrying refused or missing sockets for RetryFor.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	until := time.Now().Add(c.RetryFor)
	for {
		conn, err := d.DialContext(ctx, "unix", c.Path)
		if err == nil {
			return conn, nil
		}
		if !retryable(err) || time.Now().After(until) || ctx.Err() != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func retryable(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) ||
		errors.Is(err, syscall.EAGAIN)
}

func firstWord(cmd string) string {
	f := strings.Fields(cmd)
	switch {
	case len(f) == 0:
		return ""
	case len(f) == 1:
		return f[0]
	default:
		return f[0] + " " + f[1]
	}
}

// Escape quotes one CLI argument: HAProxy splits arguments on blanks and commands on
// ';', and a backslash protects the next character (HAProxy removes the backslash; a
// doubled one stands for one). It works on bytes: every other byte, valid UTF-8 or
// not, goes through unchanged. It cannot protect NUL, CR or LF, nor a trailing "<<"
// (see config.CheckMapEntry).
func Escape(arg string) string {
	var b strings.Builder
	b.Grow(len(arg) + 8)
	for i := 0; i < len(arg); i++ {
		switch arg[i] {
		case ' ', '\t', ';', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(arg[i])
	}
	return b.String()
}
