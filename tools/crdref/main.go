// Command crdref writes docs/crd-reference.md, the reference of HAPTIC's custom
// resources, from the CRDs in charts/haptic/crds — which controller-gen generates
// from the Go types in api/v1alpha1 (make generate), so the field descriptions are
// the types' doc comments.
//
//	go run ./tools/crdref > docs/crd-reference.md
//
// TestReferenceUpToDate fails when the committed file differs (go test -update
// rewrites it).
package main

import (
	"fmt"
	"os"
)

func main() {
	out, err := reference("charts/haptic/crds")
	if err != nil {
		fmt.Fprintln(os.Stderr, "crdref:", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}
