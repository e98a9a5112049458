package render

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
)

// servers_ahead reads, on another core, the server lines service_servers will be
// asked for while the template writes the backends around them:
//
//	{% servers_ahead("services", "endpoints", backends) %}
//
// It works only in a render from nothing (no earlier render memoized: a cold start,
// a new config, `haptic benchmark`), where every backend's lines are written; in a
// render after a change, which writes the few runs of backends the change touched,
// it does nothing. Called again while it reads (the ingress library starts it on its
// runs' backends with ingress_servers_ahead, then gives the merged list), it only
// gives backend_servers the new list. One goroutine walks the
// backends in order and reads each with a reader of its own, recording its reads
// apart (apart.go); service_servers (or backend_servers) takes the lines it finds
// read, and their reads into the fragment being rendered, reads the ones it finds
// not yet begun itself, and while it waits for the one the goroutine is reading,
// reads the next one nobody has begun (help): the two share the reads. A panic
// reading one (a store error) is raised again where service_servers takes it. The
// render stops the goroutine when it ends (stopAhead).

// serversAhead is one servers_ahead call's backends, for the render.
type serversAhead struct {
	list   *listedBackends
	lines  []aheadLines // one per backend of list, in order
	next   int          // the one service_servers is expected to ask for next
	stop   atomic.Bool
	done   chan struct{}
	helper aheadReader // the template's, reading while it waits (help)
}

// aheadLines are one backend's lines; state says who reads them.
type aheadLines struct {
	state    atomic.Int32
	lines    serverLines
	reads    []*read
	panicked any
}

const (
	aheadFree  = iota // not begun: the first to claim it reads it
	aheadBusy         // being read ahead
	aheadReady        // read ahead: lines, reads and panicked are set
	aheadTaken        // taken by service_servers, or claimed to be read there
)

// aheadWindow is how far service_servers looks past the backend it expects for the
// one it is asked for (a backend the template skipped).
const aheadWindow = 8

func (e *Engine) serversAhead(services, endpoints string, backends []*IngressBackend) {
	st := e.st
	st.listed = &listedBackends{services: services, endpoints: endpoints, backends: backends}
	if !st.mayReadAhead() || len(backends) == 0 {
		return // (or a list read ahead already: backend_servers takes from it what is in the same place)
	}
	a := &serversAhead{list: st.listed, lines: make([]aheadLines, len(backends)), done: make(chan struct{})}
	st.ahead = a
	go a.read(st)
}

// mayReadAhead reports whether the render may start reading server lines ahead: one
// from nothing (no earlier render memoized) that records its reads, none read ahead yet.
func (st *renderState) mayReadAhead() bool {
	return st.rec != nil && st.ahead == nil && st.prev == nil
}

// read reads every backend's lines not claimed yet, in order, until the render stops it.
func (a *serversAhead) read(st *renderState) {
	defer close(a.done)
	var w aheadReader
	for i := range a.lines {
		if a.stop.Load() {
			return
		}
		a.claim(st, i, &w)
	}
}

// aheadReader is what one goroutine reading ahead keeps from backend to backend.
type aheadReader struct {
	recent recentReads
	d      deps
}

// claim reads backend i's lines when no one has begun them, reporting whether it did.
func (a *serversAhead) claim(st *renderState, i int, w *aheadReader) bool {
	l := &a.lines[i]
	if !l.state.CompareAndSwap(aheadFree, aheadBusy) {
		return false
	}
	w.d.reads = w.d.reads[:0]
	func() {
		defer func() { l.panicked = recover() }()
		rd := reader{st: st, deps: &w.d, recent: &w.recent}
		b := a.list.backends[i]
		l.lines = rd.serverLines(a.list.services, a.list.endpoints, b.Namespace, b.Service, b.Port, b.indexKey())
	}()
	l.reads = slices.Clone(w.d.reads)
	l.state.Store(aheadReady)
	return true
}

// help reads, while the template waits for the backend the goroutine is reading,
// the first backend after it that no one has begun (within aheadWindow): the
// goroutine then skips it, and the two share the reads instead of the template
// waiting on the goroutine's pace. It reports whether it read one.
func (a *serversAhead) help(st *renderState) bool {
	for i := a.next; i < min(a.next+aheadWindow, len(a.lines)); i++ {
		if a.claim(st, i, &a.helper) {
			return true
		}
	}
	return false
}

// take returns the lines read ahead for a service_servers call, waiting while they
// are being read, with their reads recorded in the fragment being rendered; false
// when the call is to read them itself.
func (a *serversAhead) take(st *renderState, services, endpoints, ns, service, port string) (serverLines, bool) {
	if !a.serves(st) || services != a.list.services || endpoints != a.list.endpoints {
		return nil, false
	}
	for i := a.next; i < min(a.next+aheadWindow, len(a.lines)); i++ {
		if b := a.list.backends[i]; b.Namespace == ns && b.Service == service && b.Port == port {
			return a.takeAt(st, i)
		}
	}
	return nil, false
}

// serves reports whether a reads ahead for a render that records what it reads.
func (a *serversAhead) serves(st *renderState) bool {
	return a != nil && st.rec != nil
}

// takeAt is take of backend i of the list.
func (a *serversAhead) takeAt(st *renderState, i int) (serverLines, bool) {
	l := &a.lines[i]
	a.next = i + 1
	for {
		switch l.state.Load() {
		case aheadFree:
			if l.state.CompareAndSwap(aheadFree, aheadTaken) {
				return nil, false
			}
		case aheadBusy:
			if !a.help(st) {
				runtime.Gosched() // (a backend's reads take microseconds)
			}
		case aheadReady:
			l.state.Store(aheadTaken)
			if l.panicked != nil {
				panic(l.panicked)
			}
			d := &st.rec.top().deps
			for _, r := range l.reads {
				d.addRead(r)
			}
			st.reuse.ServersAhead++
			return l.lines, true
		default: // taken before: read again, as without servers_ahead
			return nil, false
		}
	}
}

// stopAhead stops reading ahead and waits for the goroutine: nothing reads the
// render's snapshot once the render has ended.
func (st *renderState) stopAhead() {
	if a := st.ahead; a != nil {
		a.stop.Store(true)
		<-a.done
		st.ahead = nil
	}
}

// backend_servers(suffix, i) is service_servers of backend i of the list the last
// servers_ahead call of the render was given, with its stores:
//
//	{% servers_ahead("services", "endpoints", bs) %}
//	{% for i, b := range bs %} ... {{ backend_servers(" check" + b.ServerOpts, i) }}
//
// The same lines, for a call the template engine makes without reflect (a function
// of a string and an int giving a string is one it calls directly): service_servers'
// six arguments cost a reflect call per backend, a third of the ingress library's
// haproxy.cfg at 5,000 Ingresses.
func (e *Engine) backendServers(suffix string, i int) string {
	l := e.st.listed
	n := 0
	if l != nil {
		n = len(l.backends)
	}
	mustBeIn("backend_servers", "servers_ahead", l != nil, n, i)
	st := e.st
	if a := st.ahead; a.serves(st) && a.holds(l, i) {
		if lines, ok := a.takeAt(st, i); ok {
			return lines.text(suffix)
		}
	}
	b := l.backends[i]
	return st.here().serverLines(l.services, l.endpoints, b.Namespace, b.Service, b.Port, b.indexKey()).text(suffix)
}

// holds reports whether a reads backend i of list l ahead: l is its list, or a list
// of the same stores with the same backend in that place (the merged list of the runs
// it read from, ingress_servers_ahead).
func (a *serversAhead) holds(l *listedBackends, i int) bool {
	return a.list == l || a.list.services == l.services && a.list.endpoints == l.endpoints && i < len(a.list.backends) &&
		a.list.backends[i] == l.backends[i]
}

// ingress_servers_ahead(services, endpoints, runs...) is servers_ahead of the backends
// of the ingress library's runs (ingress_fragments), in order: as soon as the runs
// are made, before they are merged (ingress_merge_runs keeps that order when no
// backend is in two runs, and backend_servers finds a backend read ahead where it is
// in both lists). It does nothing in a render after a change.
func (e *Engine) ingressServersAhead(services, endpoints string, runs ...map[string][]any) {
	if !e.st.mayReadAhead() {
		return // (without the list: a change's render makes none)
	}
	var backends []*IngressBackend
	for _, r := range runs {
		backends = append(backends, ingressBackendsOf(r[backendsList])...)
	}
	e.serversAhead(services, endpoints, backends)
}

// mustBeIn fails the render when helper names backend i of a list that giver was not
// called with before it (given), or that has n backends only.
func mustBeIn(helper, giver string, given bool, n, i int) {
	if !given {
		panic(fmt.Errorf("%s: no %s call before it in this render", helper, giver))
	}
	if i < 0 || i >= n {
		panic(fmt.Errorf("%s: backend %d of %d", helper, i, n))
	}
}

// listedBackends are the last servers_ahead call's arguments (backend_servers).
type listedBackends struct {
	services, endpoints string
	backends            []*IngressBackend
}
