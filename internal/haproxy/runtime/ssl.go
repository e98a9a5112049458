package runtime

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// SSL operations change certificates and crt-lists without a reload (HAProxy 2.2+).
// Paths are the ones HAProxy knows the files by: as written in crt-list lines and
// in `crt`/`crt-list` bind arguments.

// SetSSLCert replaces a certificate's content — `set ssl cert <path> <<PEM`, then
// `commit ssl cert` — after `new ssl cert <path>` when New (a file HAProxy has not
// loaded). PEM holds the certificate and its key: it is a secret, see Redact.
type SetSSLCert struct {
	Path string `json:"path"`
	PEM  string `json:"pem"`
	New  bool   `json:"new,omitempty"`
}

// SetSSLCAFile replaces a loaded CA file's content — `set ssl ca-file <path> <<PEM`,
// then `commit ssl ca-file` (HAProxy 2.5+) — for every bind and server that uses it.
type SetSSLCAFile struct {
	Path string `json:"path"`
	PEM  string `json:"pem"`
}

// DelSSLCert removes a certificate no crt-list or bind uses any more.
type DelSSLCert struct {
	Path string `json:"path"`
}

// AddCrtListEntry appends a line ("<cert path> [options] [sni filters]") to a
// crt-list: `add ssl crt-list <crt-list> <<line`.
type AddCrtListEntry struct {
	CrtList string `json:"crtList"`
	Line    string `json:"line"`
}

// DelCrtListEntry removes a certificate's line from a crt-list.
type DelCrtListEntry struct {
	CrtList string `json:"crtList"`
	Cert    string `json:"cert"`
}

func (*SetSSLCert) Kind() string      { return "set-ssl-cert" }
func (*SetSSLCAFile) Kind() string    { return "set-ssl-ca-file" }
func (*DelSSLCert) Kind() string      { return "del-ssl-cert" }
func (*AddCrtListEntry) Kind() string { return "add-crt-list-entry" }
func (*DelCrtListEntry) Kind() string { return "del-crt-list-entry" }

func init() {
	kinds["set-ssl-cert"] = func() Operation { return &SetSSLCert{} }
	kinds["set-ssl-ca-file"] = func() Operation { return &SetSSLCAFile{} }
	kinds["del-ssl-cert"] = func() Operation { return &DelSSLCert{} }
	kinds["add-crt-list-entry"] = func() Operation { return &AddCrtListEntry{} }
	kinds["del-crt-list-entry"] = func() Operation { return &DelCrtListEntry{} }
}

// Redact returns op without secret content (certificate keys), for printing.
func Redact(op Operation) Operation {
	if c, ok := op.(*SetSSLCert); ok {
		r := *c
		r.PEM = fmt.Sprintf("(%d bytes, not shown)", len(c.PEM))
		return &r
	}
	return op
}

var sslPathRe = regexp.MustCompile(`^/[^\s;\\]+$`)

func checkSSLPath(kind, what, p string) error {
	if !sslPathRe.MatchString(p) {
		return fmt.Errorf("%s: %s %q is not an absolute path without blanks", kind, what, p)
	}
	return nil
}

func (o *SetSSLCert) Validate() error {
	if err := checkSSLPath(o.Kind(), "path", o.Path); err != nil {
		return err
	}
	if !strings.Contains(o.PEM, "-----BEGIN ") {
		return fmt.Errorf("%s %s: content is not PEM", o.Kind(), o.Path)
	}
	return nil
}
func (o *SetSSLCAFile) Validate() error {
	if err := checkSSLPath(o.Kind(), "path", o.Path); err != nil {
		return err
	}
	for _, l := range strings.Split(o.PEM, "\n") {
		if strings.HasPrefix(l, "-----BEGIN ") && strings.TrimSpace(l) != "-----BEGIN CERTIFICATE-----" {
			return fmt.Errorf("%s %s: content holds %s, not only certificates", o.Kind(), o.Path, strings.Trim(l, "- \r"))
		}
	}
	if !strings.Contains(o.PEM, "-----BEGIN CERTIFICATE-----") {
		return fmt.Errorf("%s %s: content holds no PEM certificate", o.Kind(), o.Path)
	}
	return nil
}
func (o *DelSSLCert) Validate() error { return checkSSLPath(o.Kind(), "path", o.Path) }
func (o *AddCrtListEntry) Validate() error {
	if err := checkSSLPath(o.Kind(), "crt-list", o.CrtList); err != nil {
		return err
	}
	f := strings.Fields(o.Line)
	if len(f) == 0 || strings.ContainsAny(o.Line, "\n\r") {
		return fmt.Errorf("%s %s: line %q is not one crt-list line", o.Kind(), o.CrtList, o.Line)
	}
	return checkSSLPath(o.Kind(), "certificate", f[0])
}
func (o *DelCrtListEntry) Validate() error {
	if err := checkSSLPath(o.Kind(), "crt-list", o.CrtList); err != nil {
		return err
	}
	return checkSSLPath(o.Kind(), "certificate", o.Cert)
}

// PayloadExecer runs a command whose payload follows it (`<command> <<`, the
// payload's lines, an empty line).
type PayloadExecer interface {
	DoPayload(ctx context.Context, command, payload string) (string, error)
}

// DoPayload sends command with payload; payload lines must not be empty (an empty
// line ends it), so blank lines are dropped.
func (c *Client) DoPayload(ctx context.Context, command, payload string) (string, error) {
	var lines []string
	for _, l := range strings.Split(payload, "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return c.do(ctx, command, func(w io.Writer) error {
		_, err := io.WriteString(w, command+" <<\n"+strings.Join(lines, "\n")+"\n\n")
		return err
	})
}

func withPayload(ctx context.Context, x Execer, command, payload string, ok func(string) bool) error {
	px, can := x.(PayloadExecer)
	if !can {
		return fmt.Errorf("%s: the runtime connection cannot send payloads", firstWord(command))
	}
	out, err := px.DoPayload(ctx, command, payload)
	if err != nil {
		return err
	}
	if reply := strings.TrimSpace(out); !ok(reply) {
		return fmt.Errorf("%s: %s", firstWord(command), reply)
	}
	return nil
}

func contains(s string) func(string) bool {
	return func(r string) bool { return strings.Contains(r, s) }
}

func (o *SetSSLCert) Run(ctx context.Context, x Execer, _ MapPath) error {
	if o.New {
		if _, err := expect(ctx, x, "new ssl cert "+o.Path, contains("New empty certificate store")); err != nil {
			return wrap(o, o.Path, err)
		}
	}
	if err := withPayload(ctx, x, "set ssl cert "+o.Path, o.PEM, contains("Transaction ")); err != nil {
		_, _ = x.Do(ctx, "abort ssl cert "+o.Path)
		return wrap(o, o.Path, err)
	}
	_, err := expect(ctx, x, "commit ssl cert "+o.Path, contains("Success!"))
	return wrap(o, o.Path, err)
}

func (o *SetSSLCAFile) Run(ctx context.Context, x Execer, _ MapPath) error {
	if err := withPayload(ctx, x, "set ssl ca-file "+o.Path, o.PEM, contains("ransaction created")); err != nil {
		_, _ = x.Do(ctx, "abort ssl ca-file "+o.Path)
		return wrap(o, o.Path, err)
	}
	_, err := expect(ctx, x, "commit ssl ca-file "+o.Path, contains("Success!"))
	return wrap(o, o.Path, err)
}

func (o *DelSSLCert) Run(ctx context.Context, x Execer, _ MapPath) error {
	_, err := expect(ctx, x, "del ssl cert "+o.Path, contains("deleted"))
	return wrap(o, o.Path, err)
}

func (o *AddCrtListEntry) Run(ctx context.Context, x Execer, _ MapPath) error {
	return wrap(o, o.CrtList, withPayload(ctx, x, "add ssl crt-list "+o.CrtList, o.Line, contains("Success!")))
}

func (o *DelCrtListEntry) Run(ctx context.Context, x Execer, _ MapPath) error {
	_, err := expect(ctx, x, "del ssl crt-list "+o.CrtList+" "+o.Cert, contains("deleted"))
	return wrap(o, o.CrtList+" "+o.Cert, err)
}
