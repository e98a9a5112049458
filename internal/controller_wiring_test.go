package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestControllerIsWiring: internal/controller connects the stages; the stages do
// the work. What "wiring only" can be checked mechanically: the controller imports
// only the client-go it needs to hand clients to the stages (the clientset, dynamic
// and metadata clients, the Event sink, leader election, the config and HAProxy-pod
// informers) and none of the typed API groups a stage owns; it never imports the
// pure status computation; and it calls none of the APIs that provisioning
// (Deployments, Services, EndpointSlices), drift detection (the agent's verified
// state) or status computation use. What remains in the package beyond the runner
// list — the reconcile step per fleet and the left-out bisection — is listed in
// docs/design/controller-wiring.md.
func TestControllerIsWiring(t *testing.T) {
	allowedClientGo := map[string]string{
		"k8s.io/client-go/kubernetes":                        "the clientset handed to the stages",
		"k8s.io/client-go/kubernetes/scheme":                 "the Event recorder's scheme",
		"k8s.io/client-go/kubernetes/typed/core/v1":          "the Event sink",
		"k8s.io/client-go/dynamic":                           "the dynamic client handed to the stages",
		"k8s.io/client-go/dynamic/dynamicinformer":           "the informer of the HAProxyTemplateConfig",
		"k8s.io/client-go/metadata":                          "the metadata client handed to the stages",
		"k8s.io/client-go/rest":                              "client construction",
		"k8s.io/client-go/informers":                         "the HAProxy pods' informer (discovery of deploy targets)",
		"k8s.io/client-go/tools/cache":                       "informer plumbing",
		"k8s.io/client-go/tools/record":                      "Events",
		"k8s.io/client-go/tools/leaderelection":              "leader election",
		"k8s.io/client-go/tools/leaderelection/resourcelock": "leader election",
	}
	forbiddenImports := map[string]string{
		"k8s.io/api/apps/v1":                 "Deployments are provisioning's (internal/provision)",
		"k8s.io/api/discovery/v1":            "EndpointSlices are provisioning's (internal/provision)",
		module + "/internal/status":          "status is computed in internal/status, written by internal/status/writer",
		module + "/internal/plan":            "deploy decides runtime vs reload",
		module + "/internal/haproxy/runtime": "only the agent talks to HAProxy",
	}
	forbiddenCalls := map[string]string{
		"AppsV1":       "Deployments are provisioning's (internal/provision)",
		"DiscoveryV1":  "EndpointSlices are provisioning's (internal/provision)",
		"Services":     "Gateway Services are provisioning's (internal/provision)",
		"VerifyState":  "drift detection is deploy's (Deployer.WatchDrift)",
		"Compute":      "status computation is internal/status's",
		"UpdateStatus": "",
	}
	dir := "controller"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files++
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if why, bad := forbiddenImports[path]; bad {
				t.Errorf("%s imports %s: %s", name, path, why)
			}
			if strings.HasPrefix(path, "k8s.io/client-go/") {
				if _, ok := allowedClientGo[path]; !ok {
					t.Errorf("%s imports %s: not wiring (allowed: the clients, Events, leader election, the config and pod informers)", name, path)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			why, bad := forbiddenCalls[sel.Sel.Name]
			if !bad {
				return true
			}
			if sel.Sel.Name == "UpdateStatus" {
				// The controller writes its own HAProxyTemplateConfig's status only.
				if name != "status.go" {
					t.Errorf("%s: %s calls UpdateStatus: route and Gateway status is the status writer's", name, fset.Position(sel.Pos()))
				}
				return true
			}
			t.Errorf("%s: %s uses %s: %s", name, fset.Position(sel.Pos()), sel.Sel.Name, why)
			return true
		})
	}
	if files < 5 {
		t.Fatalf("read %d files of internal/controller", files)
	}
}
