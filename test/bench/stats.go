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

// Flatness is how latency moves from the first routes to the last: the samples in
// blocks of BlockRoutes routes by route index (the change-latency issue's "p50 of
// the last 500 within 1.5× of the first 500"). The probe polls every 5 ms, so a
// block's p50 sits on a poll; its mean shows a trend the p50 can hide.
type Flatness struct {
	BlockRoutes int       `json:"block_routes"`
	Blocks      []Summary `json:"blocks"`
	// First and Last are the first and the last BlockRoutes routes (Last overlaps
	// the block before when the route count is not a multiple of BlockRoutes).
	First     Summary `json:"first"`
	Last      Summary `json:"last"`
	P50Ratio  float64 `json:"p50_last_over_first"`
	MeanRatio float64 `json:"mean_last_over_first"`
}

// FlatnessOf computes Flatness of samples (latency of route routes[i]) in blocks of
// block routes; it is zero with fewer than two blocks of routes.
func FlatnessOf(routes []int, latency []time.Duration, block int) Flatness {
	last := -1
	for _, r := range routes {
		last = max(last, r)
	}
	if block <= 0 || last+1 < 2*block {
		return Flatness{}
	}
	byBlock := make([][]time.Duration, last/block+1)
	var first, final []time.Duration
	for i, r := range routes {
		byBlock[r/block] = append(byBlock[r/block], latency[i])
		if r < block {
			first = append(first, latency[i])
		}
		if r > last-block {
			final = append(final, latency[i])
		}
	}
	f := Flatness{BlockRoutes: block, First: Summarize(first), Last: Summarize(final)}
	for _, b := range byBlock {
		f.Blocks = append(f.Blocks, Summarize(b))
	}
	if f.First.P50Ms > 0 {
		f.P50Ratio = math.Round(f.Last.P50Ms/f.First.P50Ms*100) / 100
	}
	if f.First.MeanMs > 0 {
		f.MeanRatio = math.Round(f.Last.MeanMs/f.First.MeanMs*100) / 100
	}
	return f
}
