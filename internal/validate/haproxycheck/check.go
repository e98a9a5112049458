package validate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// DefaultLayout is where files live on an HAProxy pod unless the config's dataplane
// settings say otherwise (same defaults as the CRD).
var DefaultLayout = bundle.Layout{
	ConfigFile:        "/etc/haproxy/haproxy.cfg",
	MapsDir:           "/etc/haproxy/maps",
	SSLCertsDir:       "/etc/haproxy/ssl",
	GeneralStorageDir: "/etc/haproxy/general",
}

// DefaultCheckTimeout bounds one `haproxy -c` when the context has no deadline.
const DefaultCheckTimeout = 30 * time.Second

// ErrBinaryNotFound means the HAProxy binary is not installed or not on PATH. The CLI
// maps it to exit code 2 (a usage/environment error, not a test failure).
var ErrBinaryNotFound = errors.New("haproxy binary not found")

// binaryNotFoundError names the binary and says how to fix it; it matches
// ErrBinaryNotFound with errors.Is.
type binaryNotFoundError struct{ binary string }

func (e *binaryNotFoundError) Error() string {
	return fmt.Sprintf("haproxy binary %q not found: install HAProxy (apt-get install -y haproxy) or pass --haproxy-binary", e.binary)
}

func (e *binaryNotFoundError) Is(target error) bool { return target == ErrBinaryNotFound }

// HAProxyError is a configuration HAProxy rejected. Paths in it are production paths.
type HAProxyError struct {
	// Alerts are HAProxy's ALERT lines, each followed by the offending source line
	// when HAProxy names one ("    12 | bogus_keyword foo").
	Alerts []string `json:"alerts"`
	// Output is HAProxy's whole output, paths mapped back.
	Output string `json:"output"`
	// ExitCode is HAProxy's exit status (-1 when it did not exit normally).
	ExitCode int `json:"exitCode"`
}

func (e *HAProxyError) Error() string {
	if len(e.Alerts) == 0 {
		return fmt.Sprintf("haproxy -c failed (exit %d): %s", e.ExitCode, strings.TrimSpace(e.Output))
	}
	return "haproxy -c failed:\n" + strings.Join(e.Alerts, "\n")
}

// Checker validates bundles with `haproxy -c`. The zero value uses the `haproxy` on
// PATH and DefaultLayout. Results are cached by (binary, layout, bundle hash) because
// validation tests and the controller re-check identical bundles; set NoCache to
// force a run.
type Checker struct {
	Binary  string
	Layout  bundle.Layout
	NoCache bool
}

func (c *Checker) binary() string {
	if c == nil || c.Binary == "" {
		return "haproxy"
	}
	return c.Binary
}

func (c *Checker) layout() bundle.Layout {
	if c == nil || c.Layout == (bundle.Layout{}) {
		return DefaultLayout
	}
	return c.Layout
}

// LookPath resolves the binary, returning an error matching ErrBinaryNotFound when it
// is missing. The runner calls it once up front so that a missing HAProxy is one
// clear error instead of a failure in every test.
func (c *Checker) LookPath() (string, error) {
	p, err := exec.LookPath(c.binary())
	if err != nil {
		return "", &binaryNotFoundError{binary: c.binary()}
	}
	return p, nil
}

// Check lays b out in a fresh temporary directory, runs `haproxy -c` on it and
// removes the directory. A rejected configuration is a *HAProxyError.
func (c *Checker) Check(ctx context.Context, b *bundle.Bundle) error {
	if c == nil {
		c = &Checker{}
	}
	bin, err := c.LookPath()
	if err != nil {
		return err
	}
	if b == nil {
		return errors.New("haproxy -c: no bundle")
	}
	layout := c.layout()
	if c.NoCache {
		return runCheck(ctx, bin, layout, b)
	}
	hash := b.Hash
	if hash == "" { // a Bundle literal not built with bundle.New
		hash = bundle.New(b.Files).Hash
	}
	key := checkKey{binary: bin, layout: layout, hash: hash}
	return checkCache.do(ctx, key, func() error { return runCheck(ctx, bin, layout, b) }, isVerdict)
}

// isVerdict reports whether err is HAProxy's answer (cacheable) rather than a timeout
// or I/O error that may not recur.
func isVerdict(err error) bool {
	var herr *HAProxyError
	return err == nil || errors.As(err, &herr)
}

func runCheck(ctx context.Context, bin string, layout bundle.Layout, b *bundle.Bundle) error {
	if _, ok := b.Get("haproxy.cfg"); !ok {
		return errors.New("haproxy -c: bundle has no haproxy.cfg")
	}
	tmp, err := os.MkdirTemp("", "haptic-validate-")
	if err != nil {
		return fmt.Errorf("haproxy -c: temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	tmpLayout := layout.Rebase(tmp)
	if err := b.Relocate(layout, tmpLayout).WriteTo(tmpLayout); err != nil {
		return fmt.Errorf("haproxy -c: lay out bundle: %w", err)
	}

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultCheckTimeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, bin, "-c", "-f", tmpLayout.ConfigFile)
	cmd.Dir = tmp
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("haproxy -c: %w", ctx.Err())
	}
	if runErr == nil {
		return nil
	}
	var exitErr *exec.ExitError
	if !errors.As(runErr, &exitErr) {
		return fmt.Errorf("haproxy -c: run %s: %w", bin, runErr)
	}
	// Map temp paths back so messages name the files as they exist in production.
	output := strings.ReplaceAll(out.String(), tmp, "")
	return &HAProxyError{
		Alerts:   alerts(output, layout, b),
		Output:   output,
		ExitCode: exitErr.ExitCode(),
	}
}

var (
	// "[ALERT]    (12876) : config : ..." — the pid is dropped to keep messages stable.
	alertRe = regexp.MustCompile(`^\[(ALERT|ERROR)\]\s*(\(\d+\)\s*)?:\s*`)
	// HAProxy writes both "parsing [file:12] :" and "Parsing [file:12]:".
	locRe = regexp.MustCompile(`(?i)parsing \[([^\]]+):(\d+)\]`)
)

// generic ALERT lines that only repeat that there were errors.
func genericAlert(s string) bool {
	return strings.Contains(s, "Fatal errors found in configuration") ||
		strings.Contains(s, "Error(s) found in configuration file")
}

// alerts extracts HAProxy's ALERT lines and appends the source line each one names.
func alerts(output string, layout bundle.Layout, b *bundle.Bundle) []string {
	var specific, generic []string
	for _, line := range strings.Split(output, "\n") {
		m := alertRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		msg := "[" + m[1] + "] " + strings.TrimSpace(line[len(m[0]):])
		if genericAlert(msg) {
			generic = append(generic, msg)
			continue
		}
		if loc := locRe.FindStringSubmatch(msg); loc != nil {
			if src, ok := sourceLine(b, layout, loc[1], loc[2]); ok {
				msg += "\n    " + loc[2] + " | " + src
			}
		}
		specific = append(specific, msg)
	}
	if len(specific) == 0 {
		return generic
	}
	return specific
}

// sourceLine returns line n of the bundle file that lives at path in production.
func sourceLine(b *bundle.Bundle, layout bundle.Layout, path, n string) (string, bool) {
	ln, err := strconv.Atoi(n)
	if err != nil || ln < 1 {
		return "", false
	}
	for _, f := range b.Files {
		if layout.Path(f) != path {
			continue
		}
		lines := strings.Split(f.Content, "\n")
		if ln > len(lines) {
			return "", false
		}
		return strings.TrimRight(lines[ln-1], "\r"), true
	}
	return "", false
}

var versionRe = regexp.MustCompile(`(?i)HA-?Proxy version (\S+)`)

// Version runs `<binary> -v` and returns the version, e.g. "2.6.12-1+deb12u4".
func Version(ctx context.Context, binary string) (string, error) {
	c := &Checker{Binary: binary}
	bin, err := c.LookPath()
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, bin, "-v").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s -v: %w", bin, err)
	}
	m := versionRe.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s -v: no version in output %q", bin, firstLine(string(out)))
	}
	return string(m[1]), nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
