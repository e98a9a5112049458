// Package bundle holds the rendered output of one render: haproxy.cfg, maps, general
// files, certificates and crt-lists, each with a content hash and its content as a
// Text (text.go: pieces a file's versions share, edited without copying). It is one of the three
// plain data types that pass between stages (snapshot → bundle → plan) and imports
// nothing from Kubernetes. The rules its files must follow (quoting, map entries,
// the checks of every rendered file) are HAProxy syntax and live in
// internal/haproxy/config.
package bundle
