package render

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/open2b/scriggo"

	"github.com/haproxy-haptic/haptic/internal/snapshot"
)

// Scriggo reports no position for panics at run time, and nothing about the object a
// loop was on. Rather than pay for tracking on every render, a failed render is
// diagnosed afterwards: a build of the failing template with a line marker at the
// start of every text line finds the line, and bisecting the watched objects finds the
// object whose removal makes the error go away.

const atFunc = "_haptic_at"

const maxDiagnosticRenders = 48

// at is the line marker of diagnostic builds; normal builds never call it.
func (e *Engine) at(template string, line int) string {
	e.st.atTemplate, e.st.atLine = template, line
	return ""
}

// diagnose runs with e.mu held, like Render.
func (e *Engine) diagnose(ctx context.Context, m mainTemplate, in Input, renderErr error) error {
	var te *TemplateError
	if !errors.As(renderErr, &te) {
		return renderErr
	}
	if te.Line == 0 {
		e.findLine(ctx, m, in, te)
	}
	if res, key := e.findObject(ctx, m, in, te.Message); key != "" {
		te.Object, te.resource, te.key = res+" "+key, res, key
	}
	return te
}

// findLine re-renders the failing template from a marked build.
func (e *Engine) findLine(ctx context.Context, m mainTemplate, in Input, te *TemplateError) {
	fsys := scriggo.Files{}
	for path, src := range e.sources {
		pre, err := preprocess(trimMarkers(markLines(src.text, src.display)), sortedSnippets(e.spec.TemplateSnippets), e.knownSnippets(), false)
		if err != nil {
			return
		}
		fsys[path] = []byte(pre)
	}
	decls, err := e.declarations()
	if err != nil {
		return
	}
	tmpl, err := buildTemplate(fsys, mainPath(string(m.file.Kind), m.file.Name), decls)
	if err != nil {
		return // the marked build is best effort
	}
	e.begin(in)
	var sb strings.Builder
	if tmpl.Run(&sb, nil, &scriggo.RunOptions{Context: ctx}) == nil {
		return
	}
	st := e.st
	if st.atLine == 0 {
		return
	}
	te.Template, te.Line, te.Column = st.atTemplate, st.atLine, 0
	for _, src := range e.sources {
		if src.display == st.atTemplate {
			if lines := strings.Split(src.text, "\n"); st.atLine <= len(lines) {
				te.Source = lines[st.atLine-1]
			}
		}
	}
}

func (e *Engine) knownSnippets() map[string]bool {
	known := map[string]bool{}
	for n := range e.spec.TemplateSnippets {
		known[n] = true
	}
	return known
}

// markLines puts a marker call at the start of every line that begins outside of a
// template action, so the last marker run before a panic names the line.
func markLines(text, display string) string {
	var b strings.Builder
	depth := "" // closing delimiter of the action we are in, "" in plain text
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if depth == "" {
			fmt.Fprintf(&b, "{{ %s(%q, %d) }}", atFunc, display, i+1)
		}
		b.WriteString(line)
		depth = scanActions(line, depth)
	}
	return b.String()
}

// scanActions returns the closing delimiter still open at the end of line.
func scanActions(line, open string) string {
	for len(line) > 0 {
		if open != "" {
			j := strings.Index(line, open)
			if j < 0 {
				return open
			}
			line, open = line[j+len(open):], ""
			continue
		}
		j := strings.IndexByte(line, '{')
		if j < 0 || j+1 >= len(line) {
			return ""
		}
		switch {
		case strings.HasPrefix(line[j:], "{%%"):
			open, line = "%%}", line[j+3:]
		case line[j+1] == '%':
			open, line = "%}", line[j+2:]
		case line[j+1] == '{':
			open, line = "}}", line[j+2:]
		case line[j+1] == '#':
			open, line = "#}", line[j+2:]
		default:
			line = line[j+1:]
		}
	}
	return open
}

// findObject finds an object whose presence alone keeps the error: first among the
// input's suspects (the objects that changed since the last good render, one render
// each), then by bisecting each store. It returns the resource and namespace/name,
// or "" when no single object explains the error.
func (e *Engine) findObject(ctx context.Context, m mainTemplate, in Input, message string) (resource, key string) {
	budget := maxDiagnosticRenders
	fails := func(snap *snapshot.Snapshot) bool {
		budget--
		sub := in
		sub.Snapshot = snap
		e.begin(sub)
		_, _, err := e.renderOne(ctx, m, nil)
		var te *TemplateError
		return errors.As(err, &te) && te.Message == message
	}
	for _, s := range append(slices.Clone(in.Suspects), namedIn(in.Snapshot, message)...) {
		store := in.Snapshot.Stores[s.Resource]
		if store == nil || budget <= 0 {
			continue
		}
		if o, ok := find(store.List(), s.Key); ok && fails(with(in.Snapshot, store, []snapshot.Object{o})) &&
			!fails(with(in.Snapshot, store, nil)) {
			return s.Resource, s.Key
		}
	}
	for _, name := range in.Snapshot.Names() {
		store := in.Snapshot.Stores[name]
		candidates := store.List()
		if len(candidates) == 0 || fails(with(in.Snapshot, store, nil)) {
			continue // the error does not depend on this store's objects
		}
		for len(candidates) > 1 && budget > 0 {
			half := candidates[:len(candidates)/2]
			if fails(with(in.Snapshot, store, half)) {
				candidates = half
			} else if rest := candidates[len(candidates)/2:]; fails(with(in.Snapshot, store, rest)) {
				candidates = rest
			} else {
				break // the error needs objects from both halves
			}
		}
		if len(candidates) == 1 && budget > 0 && fails(with(in.Snapshot, store, candidates)) {
			return name, candidates[0].Key()
		}
	}
	return "", ""
}

// namedIn returns the namespaced objects the message names by namespace/name (as in
// "HTTPRoute default/evil: spec.rules[0]..."): suspects ahead of the bisection, which
// would blame the first store whose removal hides the error (a GatewayClass hides
// every route's).
func namedIn(snap *snapshot.Snapshot, message string) []snapshot.Ref {
	var out []snapshot.Ref
	for _, name := range snap.Names() {
		for _, o := range snap.Stores[name].List() {
			if o.Namespace != "" && namesKey(message, o.Key()) {
				out = append(out, snapshot.Ref{Resource: name, Key: o.Key()})
			}
		}
	}
	return out
}

// namesKey reports whether key stands in message as a word of its own: after a space
// or at the start, before a colon, a space or the end.
func namesKey(message, key string) bool {
	for i := 0; ; {
		j := strings.Index(message[i:], key)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(key)
		if (start == 0 || message[start-1] == ' ') && (end == len(message) || message[end] == ':' || message[end] == ' ') {
			return true
		}
		i = start + 1
	}
}

func find(objs []snapshot.Object, key string) (snapshot.Object, bool) {
	for _, o := range objs {
		if o.Key() == key {
			return o, true
		}
	}
	return snapshot.Object{}, false
}

// with returns a snapshot whose store holds only objs.
func with(snap *snapshot.Snapshot, store *snapshot.Store, objs []snapshot.Object) *snapshot.Snapshot {
	stores := make(map[string]*snapshot.Store, len(snap.Stores))
	for k, v := range snap.Stores {
		stores[k] = v
	}
	stores[store.Name] = snapshot.NewStore(store.Name, store.IndexBy, store.Type, objs)
	return &snapshot.Snapshot{Stores: stores}
}
