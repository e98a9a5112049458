package render

import (
	"errors"
	"fmt"
	"strings"

	"github.com/open2b/scriggo"
)

// TemplateError is a compile or render error located in a template.
type TemplateError struct {
	// Target is the top-level template being compiled or rendered (e.g. haproxy.cfg).
	Target string
	// Template names the template the error is in: "haproxy.cfg", "snippet backends".
	Template string
	Line     int
	Column   int
	// Source is the offending line of the template.
	Source  string
	Message string
	// Object names the watched object the error depends on, when one does.
	Object string
	// Failed is true when the template called fail(msg).
	Failed bool

	resource, key string // the object named in Object
}

// Culprit returns the watched resource and namespace/name of the object the error
// depends on, or ok=false.
func (e *TemplateError) Culprit() (resource, key string, ok bool) {
	return e.resource, e.key, e.key != ""
}

func (e *TemplateError) Error() string {
	var b strings.Builder
	where := e.Template
	if where == "" {
		where = e.Target
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%s:%d:%d: %s", where, e.Line, e.Column, e.Message)
	} else {
		fmt.Fprintf(&b, "%s: %s", where, e.Message)
	}
	if e.Object != "" {
		fmt.Fprintf(&b, " (object %s)", e.Object)
	}
	if where != e.Target {
		fmt.Fprintf(&b, " (rendering %s)", e.Target)
	}
	if e.Source != "" {
		fmt.Fprintf(&b, "\n    %s", strings.TrimRight(e.Source, " \t"))
		if e.Column > 0 {
			fmt.Fprintf(&b, "\n    %s^", strings.Repeat(" ", visibleColumn(e.Source, e.Column)))
		}
	}
	return b.String()
}

// visibleColumn maps a 1-based column to the caret offset, keeping tabs aligned.
func visibleColumn(line string, col int) int {
	if col-1 > len(line) {
		return len(line)
	}
	return max(col-1, 0)
}

// describe turns a Scriggo error into a TemplateError naming the template, line,
// column and source line.
func (e *Engine) describe(target string, err error) error {
	te := &TemplateError{Target: target, Message: err.Error()}
	var (
		build    *scriggo.BuildError
		panicErr *scriggo.PanicError
		failErr  *FailError
	)
	switch {
	case errors.As(err, &build):
		te.Message = build.Message()
		e.locate(te, build.Path(), build.Position().Line, build.Position().Column)
	case errors.As(err, &panicErr):
		te.Message = fmt.Sprint(panicErr.Message())
		e.locate(te, panicErr.Path(), panicErr.Position().Line, panicErr.Position().Column)
	case errors.As(err, &failErr):
		te.Message, te.Failed = failErr.Message, true
		e.locate(te, failErr.Template, 0, 0)
	}
	return te
}

func (e *Engine) locate(te *TemplateError, path string, line, col int) {
	src, ok := e.sources[strings.TrimPrefix(path, "/")]
	if !ok {
		te.Template = path
		return
	}
	te.Template, te.Line, te.Column = src.display, line, col
	if lines := strings.Split(src.text, "\n"); line > 0 && line <= len(lines) {
		te.Source = lines[line-1]
	}
}
