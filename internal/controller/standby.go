package controller

import (
	"context"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/watch"
)

// A replica that does not lead still answers admission: it keeps a standby — the
// config's compiled templates and its watched resources' stores, nothing rendered
// on its own, nothing delivered — so that more replicas add webhook capacity. The
// leader drops its standby once its own iteration has synced stores.

// runStandby keeps c.standby at the latest config until ctx ends.
func (c *Controller) runStandby(ctx context.Context) {
	configs, err := c.watchConfig(ctx)
	if err != nil {
		c.log.Error("admission standby: watch config", "error", err)
		return
	}
	var stop context.CancelFunc = func() {}
	defer func() {
		stop()
		c.standby.Store(nil)
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-configs:
			cfg, err := decodeConfig(u)
			if err != nil {
				c.log.Warn("admission standby: config rejected", "error", err)
				continue
			}
			it, err := c.prepare(cfg, u.GetGeneration())
			if err != nil {
				c.log.Warn("admission standby: config rejected", "error", err)
				continue
			}
			stop()
			sctx, cancel := context.WithCancel(ctx)
			stop = cancel
			c.standby.Store(it)
			go it.watchOnly(sctx)
		}
	}
}

// watchOnly fills the iteration's stores and keeps them current.
func (it *iteration) watchOnly(ctx context.Context) {
	c := it.c
	w := &watch.Watcher{Dynamic: c.dyn, Metadata: c.meta, Live: it.live, Log: c.log, Ignore: it.ignore,
		Notify: func(resource string) {
			if resource == "" {
				it.ready.Store(true)
			}
		}}
	if err := w.Run(ctx); err != nil && ctx.Err() == nil {
		c.log.Warn("admission standby: watch stopped", "error", err)
	}
}

// standbyStopper stops the standby once, when the leader's own stores are ready.
type standbyStopper struct {
	once sync.Once
	stop context.CancelFunc
}

func (s *standbyStopper) done() {
	if s.stop != nil { // nil: no webhook, no standby
		s.once.Do(s.stop)
	}
}
