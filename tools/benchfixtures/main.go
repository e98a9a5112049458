// Command benchfixtures writes an HAProxyTemplateConfig overlay whose validation tests
// hold N generated objects per step — for each step one Ingress, one Service and two
// EndpointSlices, the mix the performance guide measures — so that
//
//	haptic benchmark -f examples/ingress/haptic-config.yaml -f <(benchfixtures -steps 100,1000)
//
// times rendering at those sizes. Tests are named benchmark-ingress-<N>.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	steps := flag.String("steps", "100,1000,5000", "comma-separated Ingress counts")
	class := flag.String("class", "haptic", "ingressClassName of the generated Ingresses")
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
	if err := write(os.Stdout, counts, *class); err != nil {
		fmt.Fprintln(os.Stderr, "benchfixtures:", err)
		os.Exit(1)
	}
}

func write(w io.Writer, counts []int, class string) error {
	var b strings.Builder
	b.WriteString("apiVersion: haproxy-haptic.org/v1alpha1\nkind: HAProxyTemplateConfig\nmetadata:\n  name: benchmark\nspec:\n  validationTests:\n")
	for _, n := range counts {
		fmt.Fprintf(&b, "    benchmark-ingress-%d:\n      description: %d Ingresses, %d Services, %d EndpointSlices\n      fixtures:\n", n, n, n, 2*n)
		b.WriteString("        ingresses:\n")
		for i := range n {
			fmt.Fprintf(&b, "        - {apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: bench-ing-%d, namespace: bench}, spec: {ingressClassName: %s, rules: [{host: bench-%d.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: bench-svc-%d, port: {number: 80}}}}, {path: /api/v1, pathType: Exact, backend: {service: {name: bench-svc-%d, port: {number: 80}}}}]}}]}}\n", i, class, i, i, i)
		}
		b.WriteString("        services:\n")
		for i := range n {
			fmt.Fprintf(&b, "        - {apiVersion: v1, kind: Service, metadata: {name: bench-svc-%d, namespace: bench}, spec: {ports: [{name: http, port: 80, targetPort: %d}]}}\n", i, 8080+i%100)
		}
		b.WriteString("        endpoints:\n")
		for i := range n {
			for s := range 2 {
				fmt.Fprintf(&b, "        - {apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: bench-svc-%d-%d, namespace: bench, labels: {kubernetes.io/service-name: bench-svc-%d}}, addressType: IPv4, ports: [{name: http, port: %d}], endpoints: [{addresses: [10.%d.%d.%d], conditions: {ready: true}}]}\n",
					i, s, i, 8080+i%100, 1+s, (i/250)%250, i%250)
			}
		}
		b.WriteString("      assertions:\n      - {type: contains, pattern: '^global'}\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
