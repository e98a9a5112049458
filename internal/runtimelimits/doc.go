// Package runtimelimits makes the controller respect its container's limits, and
// keeps its resident set near what it holds.
//
// GOMAXPROCS needs nothing from us: since Go 1.25 the runtime follows the cgroup CPU
// limit on its own. GOMEMLIMIT is set by ApplyMemoryLimit from the cgroup memory limit
// (v1 or v2) through the automemlimit library, at a ratio taken from the AUTOMEMLIMIT
// environment variable (default 0.9, valid 0 < r <= 1, "off" disables it). A GOMEMLIMIT
// set in the environment takes precedence and is left alone.
//
// Loading lowers the collector's target (GOGC) while informers load every watched
// object, whose decoding garbage would otherwise set the heap's peak, and returns
// the load's pages when it ends. A GOGC set in the environment is left alone.
package runtimelimits
