package runtime

import (
	"context"
	"fmt"
	"strings"
)

// joinLines joins commands with ';' into lines under MaxLine (a command longer
// than MaxLine goes alone on its line); counts[i] is how many commands line i holds.
func joinLines(cmds []string) (lines []string, counts []int) {
	var b strings.Builder
	n := 0
	flush := func() {
		if n > 0 {
			lines, counts = append(lines, b.String()), append(counts, n)
			b.Reset()
			n = 0
		}
	}
	for _, cmd := range cmds {
		if n > 0 && b.Len()+1+len(cmd) > MaxLine {
			flush()
		}
		if n > 0 {
			b.WriteByte(';')
		}
		b.WriteString(cmd)
		n++
	}
	flush()
	return lines, counts
}

// splitReplies cuts the reply to a line of n ';'-joined commands into theirs:
// HAProxy ends each command's output with an empty line, so an output of its own
// must hold none (single-line replies: map entries changed or looked up).
func splitReplies(out string, n int) ([]string, error) {
	if n == 1 {
		return []string{strings.TrimSpace(out)}, nil
	}
	replies := make([]string, 0, n)
	for out != "" {
		if out[0] == '\n' {
			replies, out = append(replies, ""), out[1:]
			continue
		}
		end := strings.Index(out, "\n\n")
		if end < 0 {
			end = len(out) // the last reply, cut short
		}
		replies = append(replies, strings.TrimSpace(out[:end]))
		out = out[min(end+2, len(out)):]
	}
	if len(replies) != n {
		return replies, fmt.Errorf("%d replies to %d commands", len(replies), n)
	}
	return replies, nil
}

// DoEach sends cmds, ';'-joined into as few lines as fit MaxLine (one connection
// per line, not per command), and returns each command's reply, trimmed. Each
// command must have a single-line reply. Every command of a line runs even when
// one before it fails; the error reports an exchange that failed or replies that
// cannot be told apart.
func DoEach(ctx context.Context, x Execer, cmds []string) ([]string, error) {
	lines, counts := joinLines(cmds)
	replies := make([]string, 0, len(cmds))
	for i, line := range lines {
		out, err := x.Do(ctx, line)
		if err != nil {
			return replies, err
		}
		got, err := splitReplies(out, counts[i])
		if err != nil {
			return replies, fmt.Errorf("cli %q: %w", firstWord(line), err)
		}
		replies = append(replies, got...)
	}
	return replies, nil
}

// RunOps runs ops in order through x. Consecutive single-entry map operations (set,
// add and del map) go together (DoEach): a route's change of a dozen entries is one
// exchange with HAProxy, not a dozen. Each operation is validated before its
// command is sent; an invalid one stops the run after those before it ran. It
// returns how many operations were sent and, on failure, the index of the first
// that failed (the others of its exchange ran too: a caller that falls back
// discards them all).
func RunOps(ctx context.Context, x Execer, maps MapPath, ops []Op) (sent, failed int, err error) {
	var cmds []string
	var pending []entryOp
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		replies, err := DoEach(ctx, x, cmds)
		first := sent
		sent += len(pending)
		for i, o := range pending {
			// DoEach answers every command or fails: past its replies, its error.
			reply, rerr := "", err
			if i < len(replies) {
				reply, rerr = replies[i], nil
			}
			if oerr := entryDone(o, reply, rerr); oerr != nil {
				failed = first + i
				return oerr
			}
		}
		cmds, pending = cmds[:0], pending[:0]
		return nil
	}
	for i, op := range ops {
		e, ok := op.Operation.(entryOp)
		if !ok {
			if err := flush(); err != nil {
				return sent, failed, err
			}
			sent++
			if err := op.Run(ctx, x, maps); err != nil {
				return sent, i, err
			}
			continue
		}
		cmd, err := entryCommand(e, maps)
		if err != nil {
			if ferr := flush(); ferr != nil {
				return sent, failed, ferr
			}
			return sent, i, err
		}
		cmds, pending = append(cmds, cmd), append(pending, e)
	}
	return sent, failed, flush()
}
