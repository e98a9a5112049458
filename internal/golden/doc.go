// Package golden is the one way tests compare output with files under testdata/:
// `go test ./... -update` rewrites them, a plain run reports the first differing
// line. Test code only; no production package imports it.
package golden
