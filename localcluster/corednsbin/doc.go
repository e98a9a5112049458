// Package corednsbin only anchors the module that builds CoreDNS
// (go tool / build-binaries.sh build github.com/coredns/coredns from it).
package corednsbin
