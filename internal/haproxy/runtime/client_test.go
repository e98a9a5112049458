package runtime

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startHAProxy runs a master-worker HAProxy with a map and a backend; it is stopped
// by PID at cleanup.
func startHAProxy(t testing.TB) (master, admin *Client, mapFile string) {
	t.Helper()
	return startHAProxyMap(t, "a.test be_a\nb.test be_b\n")
}

// startHAProxyMap is startHAProxy with the given map file content.
func startHAProxyMap(t testing.TB, mapContent string) (master, admin *Client, mapFile string) {
	t.Helper()
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatal("haproxy not installed: make test installs it (apt-get install -y haproxy)")
	}
	dir := t.TempDir()
	mapFile = filepath.Join(dir, "host.map")
	if err := os.WriteFile(mapFile, []byte(mapContent), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := fmt.Sprintf(`global
    stats socket %s/admin.sock mode 600 level admin
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:%d
    use_backend %%[req.hdr(host),lower,map(%s)]
backend be_a
    server a1 127.0.0.1:9 disabled
backend be_b
    balance roundrobin
`, dir, port, mapFile)
	cfgFile := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("haproxy", "-W", "-S", filepath.Join(dir, "master.sock"), "-f", cfgFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	master = &Client{Path: filepath.Join(dir, "master.sock"), Timeout: time.Second, RetryFor: 5 * time.Second}
	admin = &Client{Path: filepath.Join(dir, "admin.sock"), Timeout: time.Second, RetryFor: 5 * time.Second}
	return master, admin, mapFile
}

func TestClientRealHAProxy(t *testing.T) {
	master, admin, mapFile := startHAProxy(t)
	ctx := context.Background()
	var pl ProcList
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := master.Do(ctx, "show proc")
		if err == nil {
			if pl, err = ParseShowProc(out); err == nil {
				if _, ok := pl.Current(); ok {
					break
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no worker: %v %q", err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, err := admin.Do(ctx, "show info")
	if err != nil {
		t.Fatal(err)
	}
	info, err := ParseShowInfo(out)
	if cur, _ := pl.Current(); err != nil || info.PID != cur.PID || !strings.HasPrefix(info.Version, "2.") && !strings.HasPrefix(info.Version, "3.") {
		t.Fatalf("info %+v vs %+v: %v", info, pl, err)
	}

	// Atomic replace of a map with more entries than one command line holds.
	var entries []MapEntry
	for i := 0; i < 1500; i++ {
		entries = append(entries, MapEntry{Key: fmt.Sprintf("h%04d.test", i), Value: "be_b"})
	}
	entries = append(entries, MapEntry{Key: "with;semicolon", Value: "be a; b\\"})
	op := &ReplaceMap{Map: "host.map", Entries: entries}
	paths := func(string) string { return mapFile }
	if err := op.Run(ctx, admin, paths); err != nil {
		t.Fatal(err)
	}
	out, err = admin.Do(ctx, "show map "+mapFile)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseShowMap(out)
	if err != nil || len(got) != len(entries) || got[0].Key != "h0000.test" {
		t.Fatalf("%d entries (%v)", len(got), err)
	}
	list, err := admin.Do(ctx, "show map")
	if err != nil {
		t.Fatal(err)
	}
	maps, err := ParseMapList(list)
	if err != nil || len(maps) != 1 || maps[0].Entries != len(entries) || maps[0].CurrVer == 0 {
		t.Fatalf("%+v %v", maps, err)
	}

	// Dynamic server lifecycle.
	for _, o := range []Operation{
		&AddServer{Backend: "be_b", Server: "n1", Address: "127.0.0.1", Port: 9, Weight: 3},
		&SetServerAddr{Backend: "be_b", Server: "n1", Address: "127.0.0.1", Port: 10},
		&SetServerWeight{Backend: "be_b", Server: "n1", Weight: 7},
		&SetServerState{Backend: "be_b", Server: "n1", State: "drain"},
	} {
		if err := o.Run(ctx, admin, paths); err != nil {
			t.Fatal(err)
		}
	}
	out, err = admin.Do(ctx, "show servers state be_b")
	if err != nil {
		t.Fatal(err)
	}
	servers, err := ParseServersState(out)
	if err != nil || len(servers) != 1 || servers[0].Port != 10 || servers[0].Weight != 7 {
		t.Fatalf("%+v %v", servers, err)
	}
	if err := (&DelServer{Backend: "be_b", Server: "n1"}).Run(ctx, admin, paths); err != nil {
		t.Fatal(err)
	}
	if err := (&SetMap{Map: "host.map", Key: "missing", Value: "x"}).Run(ctx, admin, paths); err == nil {
		t.Fatal("set map of a missing key succeeded")
	}
}

func TestClientRetryAndTimeout(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	c := &Client{Path: sock, Timeout: 200 * time.Millisecond}
	if _, err := c.Do(context.Background(), "show info"); err == nil {
		t.Fatal("no error without a socket")
	}
	// The socket appears later: RetryFor waits for it.
	go func() {
		time.Sleep(100 * time.Millisecond)
		ln, err := net.Listen("unix", sock)
		if err != nil {
			return
		}
		defer ln.Close()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 100)
			n, _ := conn.Read(buf)
			if strings.HasPrefix(string(buf[:n]), "hang") {
				time.Sleep(time.Second) // never answers in time
			} else {
				_, _ = conn.Write([]byte("ok\n"))
			}
			conn.Close()
		}
	}()
	c.RetryFor = 2 * time.Second
	out, err := c.Do(context.Background(), "show info")
	if err != nil || out != "ok\n" {
		t.Fatalf("%q %v", out, err)
	}
	start := time.Now()
	if _, err := c.Do(context.Background(), "hang"); err == nil || time.Since(start) > 900*time.Millisecond {
		t.Fatalf("timeout not honoured: %v after %s", err, time.Since(start))
	}
	if _, err := c.Do(context.Background(), "a\nb"); err == nil {
		t.Fatal("newline accepted")
	}
}

// TestReadBackRealHAProxy: the read operations see what runtime operations did.
func TestReadBackRealHAProxy(t *testing.T) {
	_, admin, mapFile := startHAProxy(t)
	ctx := context.Background()
	paths := func(string) string { return mapFile }
	var got []MapEntry
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, err = ShowMap(ctx, admin, mapFile); err == nil || time.Now().After(deadline) {
			break
		}
	}
	want := ParseMapFile("a.test be_a\nb.test be_b\n")
	if d := DiffMap(want, got); err != nil || !d.Empty() {
		t.Fatalf("initial map: %v %v", d, err)
	}
	for _, o := range []Operation{
		&DelMap{Map: "host.map", Key: "a.test"},
		&AddMap{Map: "host.map", Key: "a.test", Value: "be_b"},
		&AddServer{Backend: "be_b", Server: "n1", Address: "127.0.0.1", Port: 9, Weight: 3},
		&AddServer{Backend: "be_b", Server: "n2", Address: "127.0.0.1", Port: 10, Disabled: true},
	} {
		if err := o.Run(ctx, admin, paths); err != nil {
			t.Fatal(err)
		}
	}
	got, err = ShowMap(ctx, admin, mapFile)
	if err != nil {
		t.Fatal(err)
	}
	if d := DiffMap(want, got); d.String() != "1 missing (a.test be_a), 1 extra (a.test be_b)" {
		t.Fatalf("after runtime change: %s (%+v)", d, got)
	}
	servers, err := ShowServersState(ctx, admin, "be_b")
	if err != nil || len(servers) != 2 {
		t.Fatalf("%+v %v", servers, err)
	}
	if n1, n2 := servers[0], servers[1]; n1.Server != "n1" || n1.Weight != 3 || n1.Maint() || n2.Server != "n2" || n2.Port != 10 || !n2.Maint() {
		t.Fatalf("servers %+v", servers)
	}
	if _, err := ShowServersState(ctx, admin, "be_missing"); err == nil {
		t.Fatal("unknown backend: no error")
	}
	if _, err := ShowMap(ctx, admin, mapFile+".nope"); err == nil {
		t.Fatal("unknown map: no error")
	}
}
