package render

import (
	"reflect"
	"testing"
)

func TestMergeFragmentsFirstKeyWins(t *testing.T) {
	a := map[string][]any{"lines": {"k1", "a1", "k2", "a2"}, "notes": {"", "n1"}}
	b := map[string][]any{"lines": {"k2", "b2", "k3", "b3", "k3", "b3'"}, "notes": {"", "n1", "once", "n2"}, "other": {"x", 1}}
	c := map[string][]any{"notes": {"once", "n3"}}
	got := mergeFragments([]map[string][]any{a, b, c})
	want := map[string][]any{"lines": {"k1", "a1", "k2", "a2", "k3", "b3"}, "notes": {"", "n1", "", "n1", "once", "n2"}, "other": {"x", 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := stringsOf(got["lines"]); !reflect.DeepEqual(got, []string{"a1", "a2", "b3"}) {
		t.Fatalf("strings_of: %v", got)
	}
	if got := valuesOf(got["other"]); !reflect.DeepEqual(got, []any{1}) {
		t.Fatalf("values_of: %v", got)
	}
	// Merges compose: merging runs of merged fragments is merging all fragments.
	if all, runs := mergeFragments([]map[string][]any{a, b, c}), mergeFragments([]map[string][]any{mergeFragments([]map[string][]any{a, b}), c}); !reflect.DeepEqual(all, runs) {
		t.Fatalf("merge of merges %v, want %v", runs, all)
	}
	if got := stringsOf(nil); got == nil || len(got) != 0 {
		t.Fatalf("strings_of(nil) = %#v, want an empty list", got)
	}
}

func TestSortedAfterAndMapsOf(t *testing.T) {
	lines := []string{"199990 a/x be1", "199995 b/ be2", "no-separator", "199990 a/w be3"}
	if got, want := sortedAfter(lines, " "), []string{"a/w be3", "a/x be1", "b/ be2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sorted_after: %q, want %q", got, want)
	}
	if lines[0] != "199990 a/x be1" {
		t.Errorf("sorted_after changed its argument: %q", lines)
	}
	m := map[string]any{"name": "b"}
	if got := mapsOf([]any{"b", m, "s", "not a map"}); len(got) != 1 || got[0]["name"] != "b" {
		t.Errorf("maps_of: %v", got)
	}
}
