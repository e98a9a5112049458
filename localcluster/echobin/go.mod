// Module echobin builds echo-basic, the Gateway API conformance echo server, at
// the release the suite runs (sigs.k8s.io/gateway-api/conformance), and pins the
// release of the CRDs the local cluster installs. Separate from k8sbin so a
// Gateway API upgrade rebuilds echo-basic only, never Kubernetes.
module github.com/haproxy-haptic/haptic/localcluster/echobin

go 1.26.0

tool sigs.k8s.io/gateway-api/conformance/echo-basic

require (
	golang.org/x/net v0.55.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
	golang.org/x/text v0.37.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260427160629-7cedc36a6bc4 // indirect
	google.golang.org/grpc v1.81.1 // indirect
	google.golang.org/protobuf v1.36.12-0.20260120151049-f2248ac996af // indirect
	sigs.k8s.io/gateway-api v1.6.3 // indirect
	sigs.k8s.io/gateway-api/conformance v1.6.3 // indirect
)
