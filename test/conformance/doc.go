// Package conformance runs the upstream Gateway API v1.6.3 conformance suite
// (GATEWAY-HTTP, GATEWAY-GRPC and GATEWAY-TLS profiles) against HAPTIC on the local cluster. Its tests carry the
// build tag `conformance` and live in a module of their own (the suite's
// dependencies stay out of the product's go.mod), so `go test ./...` and
// `make test` never run them; `make conformance` does:
//
//	go test -tags conformance -count=1 -timeout 60m -v .
//
// See docs/conformance/README.md.
package conformance
