package netns

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
)

// Forward accepts connections on listenAddr in the calling (root) namespace
// and relays each to target, dialed inside the named namespace, until ctx ends.
// It is the one explicit path from the root namespace into the cluster.
func Forward(ctx context.Context, listenAddr, name, target string, logf func(string, ...any)) error {
	var lc net.ListenConfig
	listener, err := lc.Listen(ctx, "tcp", listenAddr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", listenAddr, err)
	}
	go func() {
		<-ctx.Done()
		listener.Close()
	}()
	dialer := Dialer{Name: name}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := listener.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accept on %s: %w", listenAddr, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := relay(ctx, conn, dialer, target); err != nil {
				logf("forward %s -> %s: %v", conn.RemoteAddr(), target, err)
			}
		}()
	}
}

func relay(ctx context.Context, client net.Conn, dialer Dialer, target string) error {
	defer client.Close()
	upstream, err := dialer.DialContext(ctx, "tcp", target)
	if err != nil {
		return err
	}
	defer upstream.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tcp, ok := dst.(*net.TCPConn); ok {
			_ = tcp.CloseWrite() // pass the half-close on
		}
		done <- struct{}{}
	}
	go pipe(upstream, client)
	go pipe(client, upstream)
	select {
	case <-done:
		<-done
	case <-ctx.Done():
	}
	return nil
}
