package controller

import (
	"context"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/runtimelimits"
	"github.com/haproxy-haptic/haptic/internal/watch"
)

// A replica that does not lead still answers admission: it relays reviews to the
// leader (relay.go) and keeps a standby — the config's compiled templates and its
// watched resources' stores, nothing rendered on its own, nothing delivered — to
// decide them when the leader cannot be reached. The leader drops its standby once
// its own iteration has synced stores.

// runStandby keeps c.standby at the latest config until ctx ends or the leader's
// own stores are in use (standbyDone).
func (c *Controller) runStandby(ctx context.Context) error {
	ctx, stop := context.WithCancel(ctx)
	c.standbyDone.set(stop)
	defer stop()
	configs, err := c.watchConfig(ctx)
	if err != nil {
		c.d.log.Error("admission standby: watch config", "error", err)
		return nil
	}
	var stopIt context.CancelFunc = func() {}
	defer func() {
		stopIt()
		c.standby.Store(nil)
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case u := <-configs:
			cfg, err := decodeConfig(u)
			if err != nil {
				c.d.log.Warn("admission standby: config rejected", "error", err)
				continue
			}
			it, err := prepare(c.d, cfg, u.GetGeneration())
			if err != nil {
				c.d.log.Warn("admission standby: config rejected", "error", err)
				continue
			}
			stopIt()
			sctx, cancel := context.WithCancel(ctx)
			stopIt = cancel
			c.standby.Store(it)
			go it.watchOnly(sctx)
		}
	}
}

// watchOnly fills the iteration's stores and keeps them current.
func (it *iteration) watchOnly(ctx context.Context) {
	d := it.d
	loadDone := runtimelimits.Loading() // (as the leader's iteration loads: run)
	defer loadDone()
	w := &watch.Watcher{Dynamic: d.dyn, Metadata: d.meta, Live: it.live, Log: d.log, Ignore: it.ignore,
		Served: watch.ServedBy(d.kube.Discovery(), true),
		Notify: func(resource string) {
			if resource == "" { // synced
				it.ready.Store(true)
				go loadDone()
			}
		}}
	if err := w.Run(ctx); err != nil && ctx.Err() == nil {
		d.log.Warn("admission standby: watch stopped", "error", err)
	}
}

// standbyStopper stops the standby once, when the leader's own stores are ready —
// also when they were ready before the standby started.
type standbyStopper struct {
	mu       sync.Mutex
	stop     context.CancelFunc
	finished bool
}

func (s *standbyStopper) set(stop context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		stop()
		return
	}
	s.stop = stop
}

func (s *standbyStopper) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	s.finished = true
	if s.stop != nil {
		s.stop()
	}
}
