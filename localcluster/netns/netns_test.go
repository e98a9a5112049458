package netns

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// scratchNetns creates a throwaway namespace with lo up, removed at cleanup.
// It needs root; the test fails (never skips) without it.
func scratchNetns(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("netns tests need root (ip netns add)")
	}
	name := fmt.Sprintf("haptic-nstest-%d", os.Getpid())
	for _, args := range [][]string{{"netns", "add", name}, {"-n", name, "link", "set", "lo", "up"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("remove netns %s: %v: %s", name, err, out)
		}
	})
	return name
}

// listenInside opens a listener inside the namespace (on a thread that is
// never returned to the runtime) and serves a fixed answer.
func listenInside(t *testing.T, name string) string {
	t.Helper()
	result := make(chan net.Listener, 1)
	errs := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := Enter(name); err != nil {
			errs <- err
			return
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			errs <- err
			return
		}
		result <- l
	}()
	var l net.Listener
	select {
	case l = <-result:
	case err := <-errs:
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "inside")
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

func TestDialerReachesOnlyInsideTheNamespace(t *testing.T) {
	name := scratchNetns(t)
	addr := listenInside(t, name)
	// The same loopback address in the root namespace has no such listener.
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("%s answered in the root namespace: the listener leaked out", addr)
	}
	client := HTTPClient(name, nil, 5*time.Second)
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("GET inside netns: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "inside" {
		t.Errorf("body = %q", body)
	}
}

func TestForwardFromRootLoopback(t *testing.T) {
	name := scratchNetns(t)
	target := listenInside(t, name)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Forward(ctx, listen, name, target, t.Logf) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("forward: %v", err)
		}
	}()
	var body []byte
	for attempt := 0; attempt < 50; attempt++ {
		resp, err := http.Get("http://" + listen + "/")
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if string(body) != "inside" {
		t.Errorf("through the forward: %q", body)
	}
}
