package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/metrics"
	"github.com/haproxy-haptic/haptic/internal/render"
	"github.com/haproxy-haptic/haptic/internal/snapshot"
	"github.com/haproxy-haptic/haptic/internal/validate"
)

// One bad object never freezes a fleet. A render that fails because of one object
// leaves that object's new version out (render.Input.LeaveOut): its version in the
// fleet's last good bundle keeps serving, or, if it had none, it is left out whole. A
// bundle that fails `haproxy -c` is rendered again with the objects that changed
// since the last good bundle reverted, bisecting them down to the one that breaks it. Either way the rest is
// deployed, and every left-out object gets a Warning Event and is counted in
// haptic_objects_left_out. Only a failure no single object explains keeps the last
// good configuration.

// maxValidationRenders bounds the renders (each followed by `haproxy -c`) spent
// finding the object that fails validation.
const maxValidationRenders = 24

// goodRenders remembers, per fleet, the snapshot of its last good bundle (whose
// difference to a new snapshot are the suspects) and what it reported left out.
type goodRenders struct {
	mu       sync.Mutex
	last     map[*fleet]*snapshot.Snapshot
	bundles  map[*fleet]*bundle.Bundle // the last bundle that passed haproxy -c
	reported map[*fleet]map[snapshot.LeftOut]bool
}

// previous returns the snapshot of f's last good bundle (nil before the first) and
// the objects of snap that changed since.
func (g *goodRenders) previous(f *fleet, snap *snapshot.Snapshot) (*snapshot.Snapshot, []snapshot.Ref) {
	g.mu.Lock()
	prev := g.last[f]
	g.mu.Unlock()
	if prev == nil {
		return nil, snap.Changed(&snapshot.Snapshot{Stores: map[string]*snapshot.Store{}})
	}
	return prev, snap.Changed(prev)
}

func (g *goodRenders) remember(f *fleet, snap *snapshot.Snapshot, b *bundle.Bundle) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil {
		g.last, g.bundles = map[*fleet]*snapshot.Snapshot{}, map[*fleet]*bundle.Bundle{}
	}
	g.last[f], g.bundles[f] = snap, b
}

func (g *goodRenders) bundle(f *fleet) *bundle.Bundle {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bundles[f]
}

// forgetLeftOut drops a stopped fleet's memory and its gauge.
func (it *iteration) forgetLeftOut(f *fleet) {
	it.good.mu.Lock()
	delete(it.good.last, f)
	delete(it.good.bundles, f)
	delete(it.good.reported, f)
	it.good.mu.Unlock()
	it.d.metrics.ObjectsLeftOut.DeletePartialMatch(map[string]string{"fleet": f.gateway.String()})
	it.d.metrics.FleetRenders.DeleteLabelValues(f.name())
	it.d.metrics.FleetRendersSkipped.DeleteLabelValues(f.name())
}

// fresh returns the left-out objects not reported for f before, and forgets those
// that are no longer left out.
func (g *goodRenders) fresh(f *fleet, now []snapshot.LeftOut) []snapshot.LeftOut {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.reported == nil {
		g.reported = map[*fleet]map[snapshot.LeftOut]bool{}
	}
	seen := map[snapshot.LeftOut]bool{}
	var out []snapshot.LeftOut
	for _, l := range now {
		seen[l] = true
		if !g.reported[f][l] {
			out = append(out, l)
		}
	}
	g.reported[f] = seen
	return out
}

// validationError is a bundle that failed `haproxy -c` with no single object to blame.
type validationError struct{ err error }

func (e *validationError) Error() string { return e.err.Error() }
func (e *validationError) Unwrap() error { return e.err }

// renderFleet renders and validates snap for f, leaving out what fails.
// since is when the first change the render carries was seen (zero: not traced).
func (it *iteration) renderFleet(ctx context.Context, f *fleet, snap *snapshot.Snapshot, since time.Time) (*render.Result, error) {
	prev, changed := it.good.previous(f, snap)
	in := render.Input{Snapshot: snap, ExtraContext: f.extra, LeaveOut: true, Suspects: changed, Fallback: prev}
	res, err := it.engine.Render(ctx, in)
	if err != nil {
		return nil, err
	}
	r := res.Reuse
	it.d.metrics.RenderFragments.WithLabelValues(f.name(), "reused").Add(float64(r.Files + r.Units + r.Shared))
	it.d.metrics.RenderFragments.WithLabelValues(f.name(), "rendered").Add(float64(r.FilesRendered + r.UnitsRendered + r.SharedComputed))
	it.d.deliveries.stage(metrics.StageRendered, since, time.Now())
	// Validation in proportion to the change: a bundle that differs from the last
	// validated one only in string maps needs no haproxy -c (see validate.NeedsFullCheck).
	if full, why := validate.NeedsFullCheck(it.good.bundle(f), res.Bundle, it.checker.Layout); full {
		if checkErr := it.checker.Check(ctx, res.Bundle); checkErr != nil {
			if res = it.leaveOutInvalid(ctx, in, checkErr); res == nil {
				return nil, &validationError{checkErr}
			}
		}
		it.d.log.Debug("validated", "why", why)
	}
	it.d.deliveries.stage(metrics.StageValidated, since, time.Now())
	// What was rendered (left-out objects at their last good version) is the next
	// render's fallback: a bad version never becomes "last good".
	it.good.remember(f, res.Snapshot, res.Bundle)
	it.reportLeftOut(f, snap, res.LeftOut)
	return res, nil
}

// leaveOutInvalid bisects the suspects for one object without which the bundle
// passes validation; it returns that render, or nil.
func (it *iteration) leaveOutInvalid(ctx context.Context, in render.Input, checkErr error) *render.Result {
	budget := maxValidationRenders
	passes := func(drop []snapshot.Ref) *render.Result {
		budget--
		sub := in
		sub.Snapshot = in.Snapshot.Revert(in.Fallback, drop...)
		res, err := it.engine.Render(ctx, sub)
		if err == nil {
			err = it.checker.Check(ctx, res.Bundle)
		}
		if err != nil {
			return nil
		}
		return res
	}
	cands := in.Suspects
	if len(cands) == 0 || passes(cands) == nil {
		return nil // the failure does not come from what changed
	}
	for len(cands) > 1 && budget > 0 && ctx.Err() == nil {
		half := cands[:len(cands)/2]
		if passes(half) != nil {
			cands = half
		} else {
			cands = cands[len(cands)/2:]
		}
	}
	if budget <= 0 {
		return nil
	}
	res := passes(cands[:1])
	if res == nil {
		return nil // no single object explains it
	}
	reason := "the configuration with it fails validation: " + firstLine(checkErr.Error())
	if _, kept := in.Fallback.Object(cands[0]); kept {
		reason += "; its last good version keeps serving"
	}
	res.LeftOut = append(res.LeftOut, snapshot.LeftOut{Resource: cands[0].Resource, Key: cands[0].Key, Reason: reason})
	return res
}

// reportLeftOut sets the fleet's gauge and tells each newly left-out object why.
func (it *iteration) reportLeftOut(f *fleet, snap *snapshot.Snapshot, leftOut []snapshot.LeftOut) {
	c := it.d
	fleetName := f.name()
	c.metrics.ObjectsLeftOut.DeletePartialMatch(map[string]string{"fleet": fleetName})
	counts := map[string]int{}
	for _, l := range leftOut {
		counts[l.Resource]++
	}
	for res, n := range counts {
		c.metrics.ObjectsLeftOut.WithLabelValues(fleetName, res).Set(float64(n))
	}
	for _, l := range it.good.fresh(f, leftOut) {
		c.log.Warn("object left out of the configuration", "fleet", fleetName, "resource", l.Resource, "object", l.Key, "reason", l.Reason)
		if ref := eventTarget(snap, l); ref != nil {
			c.recorder.Event(ref, corev1.EventTypeWarning, "LeftOut", truncate("HAPTIC left this object out of the HAProxy configuration: "+l.Reason))
		}
	}
}

// eventTarget is the object an Event about l is attached to.
func eventTarget(snap *snapshot.Snapshot, l snapshot.LeftOut) *unstructured.Unstructured {
	o, ok := snap.Object(snapshot.Ref{Resource: l.Resource, Key: l.Key})
	if !ok {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(fmt.Sprint(o.Raw["apiVersion"]))
	u.SetKind(fmt.Sprint(o.Raw["kind"]))
	u.SetNamespace(o.Namespace)
	u.SetName(o.Name)
	if md, ok := o.Raw["metadata"].(map[string]any); ok {
		if uid, ok := md["uid"].(string); ok {
			u.SetUID(types.UID(uid))
		}
	}
	if u.GetKind() == "" || u.GetKind() == "<nil>" {
		return nil
	}
	return u
}

// isValidation reports whether err is a validation failure (not a render error).
func isValidation(err error) bool {
	var v *validationError
	return errors.As(err, &v)
}
