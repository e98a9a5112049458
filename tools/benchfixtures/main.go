// Command benchfixtures writes an HAProxyTemplateConfig overlay whose validation tests
// hold the performance guide's object mix (internal/benchmix) at N steps — per step one
// Ingress (or one HTTPRoute on a shared Gateway), one Service and two EndpointSlices —
// so that
//
//	haptic benchmark -f charts/haptic/libraries/base.yaml -f charts/haptic/libraries/ingress.yaml \
//	  -f <(benchfixtures -steps 100,1000)
//
// times rendering at those sizes. Tests are named benchmark-<kind>-<N>; HTTPRoute tests
// render the Gateway's fleet (extraContext.gateway).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/benchmix"
)

func main() {
	steps := flag.String("steps", "100,1000,5000", "comma-separated route counts")
	kind := flag.String("kind", "ingress", "route kind: ingress or httproute")
	flag.Parse()
	var counts []int
	for _, s := range strings.Split(*steps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "benchfixtures: bad step %q\n", s)
			os.Exit(2)
		}
		counts = append(counts, n)
	}
	k := benchmix.Kind(*kind)
	if k != benchmix.Ingress && k != benchmix.HTTPRoute {
		fmt.Fprintf(os.Stderr, "benchfixtures: -kind must be ingress or httproute, not %q\n", *kind)
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	err := write(w, k, counts)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchfixtures:", err)
		os.Exit(1)
	}
}

func write(w io.Writer, kind benchmix.Kind, counts []int) error {
	if _, err := io.WriteString(w, "apiVersion: haproxy-haptic.org/v1alpha1\nkind: HAProxyTemplateConfig\nmetadata:\n  name: benchmark\nspec:\n  validationTests:\n"); err != nil {
		return err
	}
	for _, n := range counts {
		objs := benchmix.Build(kind, n)
		fmt.Fprintf(w, "    benchmark-%s-%d:\n      description: %d %ss, %d Services, %d EndpointSlices\n", kind, n, n, kind, n, 2*n)
		if kind == benchmix.HTTPRoute {
			fmt.Fprintf(w, "      extraContext: {gateway: %s/bench-gw}\n", benchmix.Namespace)
		}
		fmt.Fprintf(w, "      fixtures:\n")
		resources := make([]string, 0, len(objs))
		for r := range objs {
			resources = append(resources, r)
		}
		sort.Strings(resources)
		for _, r := range resources {
			fmt.Fprintf(w, "        %s:\n", r)
			for _, o := range objs[r] {
				line, err := json.Marshal(o) // JSON is YAML: one flow mapping per object
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "        - %s\n", line)
			}
		}
		if _, err := io.WriteString(w, "      assertions:\n      - {type: contains, pattern: '^global'}\n"); err != nil {
			return err
		}
	}
	return nil
}
