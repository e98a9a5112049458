package bench

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	var samples []time.Duration
	for i := 100; i >= 1; i-- { // unsorted input
		samples = append(samples, time.Duration(i)*time.Millisecond)
	}
	s := Summarize(samples)
	want := Summary{Count: 100, P50Ms: 50, P90Ms: 90, P99Ms: 99, MaxMs: 100, MinMs: 1, MeanMs: 50.5}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if samples[0] != 100*time.Millisecond {
		t.Error("Summarize reordered its input")
	}
	if one := Summarize([]time.Duration{1500 * time.Microsecond}); one.P99Ms != 1.5 || one.MeanMs != 1.5 {
		t.Errorf("one sample: %+v", one)
	}
	if (Summarize(nil) != Summary{}) {
		t.Error("no samples must give an empty summary")
	}
}

func TestFlatnessOf(t *testing.T) {
	// Two targets per route; 1,250 routes in blocks of 500: latency 10 ms for the
	// first 500 routes, 20 ms after, and 40 ms for the last 100.
	var routes []int
	var lat []time.Duration
	for r := range 1250 {
		d := 10 * time.Millisecond
		switch {
		case r >= 1150:
			d = 40 * time.Millisecond
		case r >= 500:
			d = 20 * time.Millisecond
		}
		for range 2 {
			routes, lat = append(routes, r), append(lat, d)
		}
	}
	f := FlatnessOf(routes, lat, 500)
	if len(f.Blocks) != 3 || f.Blocks[0].Count != 1000 || f.Blocks[2].Count != 500 {
		t.Fatalf("blocks %+v", f.Blocks)
	}
	// The last 500 routes are 750–1249: 400 at 20 ms and 100 at 40 ms.
	if f.First.P50Ms != 10 || f.Last.Count != 1000 || f.Last.P50Ms != 20 || f.Last.MeanMs != 24 {
		t.Fatalf("first %+v, last %+v", f.First, f.Last)
	}
	if f.P50Ratio != 2 || f.MeanRatio != 2.4 {
		t.Fatalf("ratios %v, %v", f.P50Ratio, f.MeanRatio)
	}
	if g := FlatnessOf(routes[:1998], lat[:1998], 500); g.BlockRoutes != 0 {
		t.Fatalf("999 routes in blocks of 500: %+v", g)
	}
}
