package snapshot

import (
	"sync"
	"testing"
)

func TestFormsKeepEachKind(t *testing.T) {
	var f Forms
	if _, ok := f.Get(1); ok {
		t.Fatal("an empty Forms has a form")
	}
	var wg sync.WaitGroup
	for k := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.Put(k, k*10)
		}()
	}
	wg.Wait()
	for k := range 8 {
		if v, ok := f.Get(k); !ok || v != k*10 {
			t.Errorf("kind %d: %v, %v; want %d", k, v, ok, k*10)
		}
	}
	if _, ok := f.Get("other"); ok {
		t.Error("a kind never put has a form")
	}
}

// Copies of an Object share its forms: a store made With a change keeps the
// unchanged objects' forms.
func TestCopiesShareForms(t *testing.T) {
	o := Object{Namespace: "ns", Name: "a", Raw: map[string]any{}, Forms: new(Forms)}
	s := NewStore("r", nil, nil, []Object{o})
	s2 := s.With([]Object{{Namespace: "ns", Name: "b", Raw: map[string]any{}, Forms: new(Forms)}}, nil)
	o.Forms.Put(0, "form")
	got := s2.List()[0]
	if got.Name != "a" {
		t.Fatalf("first object %s", got.Key())
	}
	if v, ok := got.Forms.Get(0); !ok || v != "form" {
		t.Errorf("the copy in a later store has %v, %v", v, ok)
	}
}
