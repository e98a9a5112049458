package config

import (
	"os"
	"slices"
	"strings"
)

// TestsSuffix ends the name of a library's validation-test file: the tests of
// libraries/gateway.yaml live in libraries/gateway.tests.yaml beside it, so that a
// library holds templates only and the controller's config never carries tests.
const TestsSuffix = ".tests.yaml"

// WithTests returns paths with each file's validation-test file (<stem>.tests.yaml
// beside <stem>.yaml) inserted right after it, when that file exists and is not
// given already: what `haptic validate` and `haptic render` load. The merge order
// is the one the tests had inside their library.
func WithTests(paths ...string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, p)
		tests, ok := testsFileOf(p)
		if !ok || slices.Contains(paths, tests) {
			continue
		}
		if st, err := os.Stat(tests); err == nil && st.Mode().IsRegular() {
			out = append(out, tests)
		}
	}
	return out
}

// testsFileOf names the validation-test file of a library file.
func testsFileOf(path string) (string, bool) {
	stem, ok := strings.CutSuffix(path, ".yaml")
	if !ok || path == "-" || strings.HasSuffix(path, TestsSuffix) {
		return "", false
	}
	return stem + TestsSuffix, true
}
