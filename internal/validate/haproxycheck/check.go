// Package haproxycheck runs `haproxy -c` on a bundle laid out in a temporary
// directory at the paths its configuration references, and reports rejections with
// production paths and the offending source lines. It depends only on the standard
// library and internal/bundle so that the agent can use it without the API types;
// package validate re-exports it for the CLI, the runner and the controller.
package haproxycheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// PATH and DefaultLayout. Results are cached by (binary, layout, extra configs, bundle
// hash) because validation tests and the controller re-check identical bundles; set
// NoCache to force a run.
type Checker struct {
	Binary string
	Layout bundle.Layout
	// ExtraConfigs are further configuration files, absolute paths, passed after the
	// bundle's config file (`-f cfg -f extra1 -f extra2 ...`) in this order. They are
	// used where they are, not copied into the temporary directory; their paths and
	// contents are part of the cache key.
	ExtraConfigs []string
	NoCache      bool
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
	for _, p := range c.ExtraConfigs {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("haproxy -c: extra config %q is not an absolute path", p)
		}
	}
	layout := c.layout()
	run := func() error { return runCheck(ctx, bin, layout, c.ExtraConfigs, b) }
	if c.NoCache {
		return run()
	}
	extras, err := extrasKey(c.ExtraConfigs)
	if err != nil {
		return run() // unreadable: let HAProxy say so, and do not cache it
	}
	hash := b.Hash
	if hash == "" { // a Bundle literal not built with bundle.New
		hash = bundle.New(b.Files).Hash
	}
	key := checkKey{binary: bin, layout: layout, extras: extras, hash: hash}
	return checkCache.do(ctx, key, run, isVerdict)
}

// extrasKey identifies the extra config files by path and content, so that neither a
// different file list nor a rewritten file reuses a verdict.
func extrasKey(paths []string) (string, error) {
	if len(paths) == 0 {
		return "", nil
	}
	h := sha256.New()
	for _, p := range paths {
		content, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(content)
		fmt.Fprintf(h, "%d:%s:%x\n", len(p), p, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// isVerdict reports whether err is HAProxy's answer (cacheable) rather than a timeout
// or I/O error that may not recur.
func isVerdict(err error) bool {
	var herr *HAProxyError
	return err == nil || errors.As(err, &herr)
}

func runCheck(ctx context.Context, bin string, layout bundle.Layout, extras []string, b *bundle.Bundle) error {
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
	args := []string{"-c", "-f", tmpLayout.ConfigFile}
	for _, p := range extras {
		args = append(args, "-f", p)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
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
		Alerts:   alerts(output, layout, b, extras),
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

// alerts extracts HAProxy's ALERT lines and appends the source line each one names,
// from the bundle's files or, for an alert in one of the extra config files, from
// that file as it is on disk (the alert already names its path).
func alerts(output string, layout bundle.Layout, b *bundle.Bundle, extras []string) []string {
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
			if src, ok := sourceLine(b, layout, extras, loc[1], loc[2]); ok {
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

// sourceLine returns line n of the bundle file that lives at path in production, or
// of the extra config file at path.
func sourceLine(b *bundle.Bundle, layout bundle.Layout, extras []string, path, n string) (string, bool) {
	ln, err := strconv.Atoi(n)
	if err != nil || ln < 1 {
		return "", false
	}
	for _, f := range b.Files {
		if layout.Path(f) == path {
			return nthLine(f.Content.String(), ln)
		}
	}
	for _, p := range extras {
		if p != path {
			continue
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return "", false
		}
		return nthLine(string(content), ln)
	}
	return "", false
}

func nthLine(content string, ln int) (string, bool) {
	lines := strings.Split(content, "\n")
	if ln > len(lines) {
		return "", false
	}
	return strings.TrimRight(lines[ln-1], "\r"), true
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
