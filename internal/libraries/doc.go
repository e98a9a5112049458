// Package libraries holds the tests of the chart's template libraries
// (charts/haptic/libraries/*.yaml): their validation tests run through the real
// config → pipeline → validate path with `haproxy -c`, and the routing maps are
// checked to grow linearly with the number of Ingresses.
package libraries
