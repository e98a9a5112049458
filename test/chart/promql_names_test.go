package chart

import (
	"slices"
	"testing"
)

// TestMetricNames checks the PromQL name extractor on the constructs the chart's
// rules and dashboard use, and on some they might.
func TestMetricNames(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		`sum by (namespace) (haptic_leader) < 1`:                                                             {"haptic_leader"},
		`histogram_quantile(0.95, sum by (namespace, le) (rate(haptic_x_bucket[5m]))) > 2`:                   {"haptic_x_bucket"},
		`sum(rate(a_total{result!="success", ns=~"$namespace"}[$__rate_interval])) / sum(rate(b_total[5m]))`: {"a_total", "b_total"},
		`(haptic_pods == 0) and on (namespace, pod) (haptic_leader == 1)`:                                    {"haptic_leader", "haptic_pods"},
		`sum(x) without (instance) * on(job) group_left(version) build_info offset 1h`:                       {"build_info", "x"},
		`label_replace(up_metric, "dst", "$1", "src", "(.*)") # comment other_metric`:                        {"up_metric"},
		`max_over_time(m:recorded:rate5m[1h:5m]) > 1e3 and bool 2`:                                           {"m:recorded:rate5m"},
		`{__name__="only_by_name"}`: {},
	}
	for expr, want := range cases {
		if got := metricNames(expr); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("metricNames(%q) = %v, want %v", expr, got, want)
		}
	}
}

func TestScrapedNames(t *testing.T) {
	t.Parallel()
	got := scrapedNames("# HELP a x\n# TYPE a counter\na_total 1\nb_bucket{le=\"1\"} 2\nc 3 1700000000\n")
	for _, n := range []string{"a_total", "b_bucket", "c"} {
		if !got[n] {
			t.Errorf("%s not found in %v", n, got)
		}
	}
	if got["a"] || len(got) != 3 {
		t.Errorf("names %v, want exactly a_total, b_bucket, c", got)
	}
}
