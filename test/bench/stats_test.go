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
