package runtime

import (
	"context"
	"fmt"
	"math"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MaxLine is the largest command line sent in one batch. HAProxy's CLI buffer is
// 16 KB on 2.6; staying well under it leaves room for the reply.
const MaxLine = 8 * 1024

// expect runs cmd and fails unless ok accepts the trimmed reply.
func expect(ctx context.Context, x Execer, cmd string, ok func(reply string) bool) (string, error) {
	out, err := x.Do(ctx, cmd)
	if err != nil {
		return out, err
	}
	reply := strings.TrimSpace(out)
	if !ok(reply) {
		return reply, fmt.Errorf("%s: %s", firstWord(cmd), reply)
	}
	return reply, nil
}

func empty(r string) bool { return r == "" }

func srv(be, s string) string { return be + "/" + s }

// The map operations validate themselves again before sending anything (Validate,
// config.CheckMapEntry) and refuse, unsent, a command longer than MaxCommand: an entry that
// HAProxy would not store as given never reaches the socket.

func (o *SetMap) Run(ctx context.Context, x Execer, maps MapPath) error {
	return runEntry(ctx, x, maps, o)
}
func (o *AddMap) Run(ctx context.Context, x Execer, maps MapPath) error {
	return runEntry(ctx, x, maps, o)
}
func (o *DelMap) Run(ctx context.Context, x Execer, maps MapPath) error {
	return runEntry(ctx, x, maps, o)
}

// entryOp is a single-entry map operation: one command line, one reply.
type entryOp interface {
	Operation
	// entry is the map and key the operation changes.
	entry() (m, key string)
	// line is the command line, maps resolved and arguments escaped.
	line(maps MapPath) string
	// success reports whether a reply (trimmed) is the command's success reply.
	success(reply string) bool
}

func (o *SetMap) entry() (string, string) { return o.Map, o.Key }
func (o *AddMap) entry() (string, string) { return o.Map, o.Key }
func (o *DelMap) entry() (string, string) { return o.Map, o.Key }

func (o *SetMap) line(maps MapPath) string {
	return "set map " + Escape(maps(o.Map)) + " " + Escape(o.Key) + " " + Escape(o.Value)
}

func (o *AddMap) line(maps MapPath) string {
	return "add map " + Escape(maps(o.Map)) + " " + Escape(o.Key) + " " + Escape(o.Value)
}

func (o *DelMap) line(maps MapPath) string {
	return "del map " + Escape(maps(o.Map)) + " " + Escape(o.Key)
}

func (o *SetMap) success(r string) bool { return r == "" }
func (o *AddMap) success(r string) bool { return r == "" }
func (o *DelMap) success(r string) bool { return r == "" || r == "Key not found." }

// entryCommand validates o and returns its command line.
func entryCommand(o entryOp, maps MapPath) (string, error) {
	if err := o.Validate(); err != nil {
		return "", err
	}
	cmd := o.line(maps)
	if err := fits(cmd); err != nil {
		m, key := o.entry()
		return "", wrapKey(o, m, key, err)
	}
	return cmd, nil
}

// entryDone is the error of o's reply, or of the exchange that should have brought it.
func entryDone(o entryOp, reply string, err error) error {
	if reply = strings.TrimSpace(reply); err == nil && !o.success(reply) {
		err = fmt.Errorf("%s: %s", strings.ReplaceAll(o.Kind(), "-", " "), reply)
	}
	m, key := o.entry()
	return wrapKey(o, m, key, err)
}

func runEntry(ctx context.Context, x Execer, maps MapPath, o entryOp) error {
	cmd, err := entryCommand(o, maps)
	if err != nil {
		return err
	}
	reply, err := x.Do(ctx, cmd)
	return entryDone(o, reply, err)
}

var newVersionRe = regexp.MustCompile(`New version created: (\d+)`)

func (o *ReplaceMap) Run(ctx context.Context, x Execer, maps MapPath) error {
	if err := o.Validate(); err != nil {
		return err
	}
	path := Escape(maps(o.Map))
	// Every entry's command must fit before anything is sent (with the widest
	// version number, which is not known yet).
	widest := fmt.Sprintf("add map @%d %s ", uint32(math.MaxUint32), path)
	for _, e := range o.Entries {
		if err := fits(widest + Escape(e.Key) + " " + Escape(e.Value)); err != nil {
			return wrapKey(o, o.Map, e.Key, err)
		}
	}
	if err := fits(fmt.Sprintf("commit map @%d %s", uint32(math.MaxUint32), path)); err != nil {
		return wrap(o, o.Map, err)
	}
	reply, err := expect(ctx, x, "prepare map "+path, newVersionRe.MatchString)
	if err != nil {
		return wrap(o, o.Map, err)
	}
	ver, _ := strconv.Atoi(newVersionRe.FindStringSubmatch(reply)[1])
	for _, line := range batch(fmt.Sprintf("add map @%d %s ", ver, path), o.Entries) {
		if _, err := expect(ctx, x, line, empty); err != nil {
			return wrap(o, o.Map, err)
		}
	}
	_, err = expect(ctx, x, fmt.Sprintf("commit map @%d %s", ver, path), empty)
	return wrap(o, o.Map, err)
}

// fits refuses a command line (without its newline) longer than MaxCommand allows.
func fits(cmd string) error {
	if n := len(cmd) + 1; n > MaxCommand {
		return fmt.Errorf("command of %d bytes is longer than HAProxy's CLI takes (%d); not sent", n, MaxCommand)
	}
	return nil
}

// batch joins "<prefix><key> <value>" commands with ';' into lines under MaxLine
// (a command longer than MaxLine goes alone on its line).
func batch(prefix string, entries []MapEntry) []string {
	cmds := make([]string, len(entries))
	for i, e := range entries {
		cmds[i] = prefix + Escape(e.Key) + " " + Escape(e.Value)
	}
	lines, _ := joinLines(cmds)
	return lines
}

func (o *AddServer) Run(ctx context.Context, x Execer, _ MapPath) error {
	name := srv(o.Backend, o.Server)
	cmd := "add server " + name + " " + net.JoinHostPort(o.Address, strconv.Itoa(o.Port))
	if o.Weight > 0 {
		cmd += " weight " + strconv.Itoa(o.Weight)
	}
	if o.Check {
		cmd += " check"
	}
	if len(o.Options) > 0 {
		cmd += " " + strings.Join(o.Options, " ")
	}
	if _, err := expect(ctx, x, cmd, func(r string) bool { return r == "New server registered." }); err != nil {
		return wrap(o, name, err)
	}
	if o.Disabled {
		return nil
	}
	if o.Check {
		if _, err := expect(ctx, x, "enable health "+name, empty); err != nil {
			return wrap(o, name, err)
		}
	}
	_, err := expect(ctx, x, "enable server "+name, empty)
	return wrap(o, name, err)
}

func (o *DelServer) Run(ctx context.Context, x Execer, _ MapPath) error {
	name := srv(o.Backend, o.Server)
	if _, err := expect(ctx, x, "set server "+name+" state maint", empty); err != nil {
		return wrap(o, name, err)
	}
	// Requests still in flight hold the server: in maintenance it gets no new ones,
	// so retry for a bounded time while they finish.
	deadline := time.Now().Add(DelServerDrain)
	for {
		reply, err := expect(ctx, x, "del server "+name, func(r string) bool { return r == "Server deleted." })
		if err == nil || !strings.Contains(reply, "still has connections") || time.Now().After(deadline) {
			return wrap(o, name, err)
		}
		select {
		case <-ctx.Done():
			return wrap(o, name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DelServerDrain is how long del-server waits for a server's in-flight requests.
var DelServerDrain = 5 * time.Second

func (o *SetServerAddr) Run(ctx context.Context, x Execer, _ MapPath) error {
	name := srv(o.Backend, o.Server)
	cmd := "set server " + name + " addr " + o.Address
	if o.Port > 0 {
		cmd += " port " + strconv.Itoa(o.Port)
	}
	// Success replies are informational ("IP changed from ...", "no need to change
	// the addr, port changed from ...").
	_, err := expect(ctx, x, cmd, func(r string) bool {
		return r == "" || strings.Contains(r, "changed from") || strings.HasPrefix(r, "no need to change")
	})
	return wrap(o, name, err)
}

func (o *SetServerState) Run(ctx context.Context, x Execer, _ MapPath) error {
	name := srv(o.Backend, o.Server)
	_, err := expect(ctx, x, "set server "+name+" state "+o.State, empty)
	return wrap(o, name, err)
}

func (o *SetServerWeight) Run(ctx context.Context, x Execer, _ MapPath) error {
	name := srv(o.Backend, o.Server)
	_, err := expect(ctx, x, "set server "+name+" weight "+strconv.Itoa(o.Weight), empty)
	return wrap(o, name, err)
}

// wrapKey is wrap naming the map and the entry key.
func wrapKey(o Operation, m, key string, err error) error {
	return wrap(o, m+" key "+quoteShort(key), err)
}

func wrap(o Operation, what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: %w", o.Kind(), what, err)
}
