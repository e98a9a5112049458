// Package publish writes the rendered configuration as an HAProxyCfg resource, for
// people and tools to read (kubectl get hcfg): haproxy.cfg, maps, general files and
// crt-lists with their checksums, certificates by name and checksum only (their
// content never leaves the controller), and per pod what it runs and how it got
// there. One HAProxyCfg per fleet: the config's name for the podSelector's pods,
// <config>-gw-<id> (labelled and annotated with its Gateway) for each Gateway's own
// pods under PerGateway provisioning; a Gateway's goes away with the Gateway.
//
// The publisher is off the delivery path. SetDesired and OnOutcome only record the
// latest state and never block; a single goroutine writes the object at most once
// per configPublishInterval (latest wins), and writes the status subresource only
// when it changed. Large content is stored gzip-compressed and base64-encoded
// (encoding: gzip+base64) so that the object stays well under the API server's
// object size limit.
//
// The pure parts — building the spec from a bundle (spec.go), encoding content
// (encoding.go) and summarising and merging pod status (status.go) — have no clock
// and no client; publisher.go and write.go talk to the API server.
package publish
