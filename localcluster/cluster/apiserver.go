package cluster

import (
	"context"
	"fmt"
	"os"
	"time"
)

// StopAPIServer stops the API server alone (SIGTERM, then SIGKILL after grace;
// 0: at once, a crash that resets every connection), leaving etcd, the
// controllers, the scheduler and the node running: the fault "API server away" of
// the resilience suite. StartAPIServer, or `up` (which repairs a cluster whose
// etcd still runs), starts it again on the same data.
func StopAPIServer(cfg Config, grace time.Duration) error {
	lock, err := Lock(cfg, "up.lock", false)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	rec, ok := readPIDFile(cfg, "kube-apiserver")
	if !ok || !rec.alive() {
		return fmt.Errorf("kube-apiserver is not running")
	}
	if err := stopProcess(rec, grace); err != nil {
		return fmt.Errorf("stop kube-apiserver: %w", err)
	}
	if err := os.Remove(pidFile(cfg, "kube-apiserver")); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove pid file: %w", err)
	}
	return nil
}

// StartAPIServer starts a stopped API server and waits until it is ready; a
// running one is left alone. etcd must run.
func StartAPIServer(ctx context.Context, cfg Config) error {
	lock, err := Lock(cfg, "up.lock", false)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if rec, ok := readPIDFile(cfg, "etcd"); !ok || !rec.alive() {
		return fmt.Errorf("etcd is not running: `haptic-cluster up` starts a fresh cluster")
	}
	if rec, ok := readPIDFile(cfg, "kube-apiserver"); !ok || !rec.alive() {
		if _, err := startInNetns(cfg, "kube-apiserver", apiserverArgs(cfg), nil); err != nil {
			return err
		}
	}
	if err := waitAPIServer(ctx, cfg, 60*time.Second); err != nil {
		return fmt.Errorf("%w (log: %s/kube-apiserver.log)", err, cfg.LogDir())
	}
	return nil
}
