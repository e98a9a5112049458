package bench

import (
	"math"
	"slices"
	"time"
)

// Summary is the distribution of a set of latency samples, in milliseconds.
type Summary struct {
	Count  int     `json:"count"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
	MinMs  float64 `json:"min_ms"`
	MeanMs float64 `json:"mean_ms"`
}

// Summarize computes the nearest-rank percentiles, max, min and mean of samples.
func Summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	var total time.Duration
	for _, s := range sorted {
		total += s
	}
	return Summary{
		Count:  len(sorted),
		P50Ms:  ms(percentile(sorted, 50)),
		P90Ms:  ms(percentile(sorted, 90)),
		P99Ms:  ms(percentile(sorted, 99)),
		MaxMs:  ms(sorted[len(sorted)-1]),
		MinMs:  ms(sorted[0]),
		MeanMs: ms(total / time.Duration(len(sorted))),
	}
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// ms is d in milliseconds, rounded to microseconds.
func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }
