// Package libraries holds the tests of the chart's template libraries
// (charts/haptic/libraries/*.yaml): their validation tests run through the real
// config → pipeline → validate path with `haproxy -c` (the tests live beside each
// library in <lib>.tests.yaml), the routing maps are checked to grow linearly with
// the number of Ingresses, and no function literal or macro of a library may exceed
// 200 lines (structure_test.go).
package libraries
