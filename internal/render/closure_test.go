package render

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// Globals must be visible inside function literals, including ones that native code
// calls (shared.ComputeIfAbsent): the guide's caching idiom depends on it.
func TestGlobalsInsideClosures(t *testing.T) {
	cases := map[string]string{
		"typed list":    `{% var f = func() any { return len(resources.Ingresses.List()) } %}# {{ f() }}`,
		"compute once":  `{% var v, _ = shared.ComputeIfAbsent("k", func() any { return len(resources.Ingresses.Fetch("a")) }) %}# {{ v }}`,
		"shared method": `{% var f = func() any { return shared.Get("missing") == nil } %}# {{ f() }}`,
		"extra context": `{% var f = func() any { return fallback(maxconn, 7) } %}# {{ f() }}`,
	}
	want := map[string]string{"typed list": "2", "compute once": "1", "shared method": "true", "extra context": "7"}
	for name, tpl := range cases {
		t.Run(name, func(t *testing.T) {
			got := mustRender(t, testSpec("global\n"+tpl), Options{Types: map[string]reflect.Type{"ingresses": ingressType}},
				testSnapshot(ingress("a", "one", "x"), ingress("b", "two", "x")))
			if got != "global\n    # "+want[name]+"\n" {
				t.Fatalf("got %q", got)
			}
		})
	}
}

// Renders of one engine are serialised; concurrent callers each get their own result.
func TestConcurrentRendersKeepTheirInputs(t *testing.T) {
	e, err := Compile(testSpec("global\n{% for _, i := range resources.Ingresses.List() %}# {{ i.Metadata.Name }}\n{% end %}"), Options{Types: map[string]reflect.Type{"ingresses": ingressType}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 20)
	for i := range 20 {
		go func() {
			name := string(rune('a' + i))
			res, err := e.Render(context.Background(), Input{Snapshot: testSnapshot(ingress("ns", name, "x"))})
			if err != nil {
				done <- err.Error()
				return
			}
			if got := res.Bundle.Config().Content.String(); got != "global\n    # "+name+"\n" {
				done <- "render " + name + " got " + got
				return
			}
			done <- ""
		}()
	}
	for range 20 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}

// TestRenderCancelledDoesNotPanic: cancelling a render in flight returns an error;
// Scriggo's VM would otherwise panic ("fatal error: context canceled") and take the
// process down.
func TestRenderCancelledDoesNotPanic(t *testing.T) {
	// The loop runs inside a closure called from Go (shared.ComputeIfAbsent), which
	// is where the VM turns the cancellation into a panic.
	spec := testSpec(`{% var v, _ = shared.ComputeIfAbsent("k", func() any { s := 0; for i := 0; i < 50000000; i++ { s++ }; return s }) %}{{ v }}`)
	eng, err := Compile(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := eng.Render(ctx, Input{Snapshot: testSnapshot()}); err == nil {
		t.Fatal("a cancelled render must fail")
	}
}
