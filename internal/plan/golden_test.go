package plan

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haproxy-haptic/haptic/internal/bundle"
	"github.com/haproxy-haptic/haptic/internal/golden"
)

// realisticConfig is a 20-backend ingress config in the shape the default library
// renders: host and path maps in the frontend, one backend per Service.
func realisticConfig(servers func(be int) []string, extra string) string {
	var b strings.Builder
	b.WriteString(`global
    master-worker
    stats socket /var/run/haproxy/admin.sock mode 600 level admin expose-fd listeners
    hard-stop-after 30s
    maxconn 8000
    log stdout format raw local0

defaults
    mode http
    log global
    option httplog
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    default-server init-addr none no-check

frontend http
    bind :8080
    bind :8443 ssl crt-list /etc/haproxy/ssl/crt.list alpn h2,http/1.1
    http-request set-var(txn.host) req.hdr(host),field(1,:),lower
    filter compression
    compression algo gzip
    compression type text/html text/plain application/json
    use_backend %[var(txn.host),concat(,txn.path),map_beg(/etc/haproxy/maps/path.map)] if { var(txn.host),concat(,txn.path),map_beg(/etc/haproxy/maps/path.map) -m found }
    use_backend %[var(txn.host),map(/etc/haproxy/maps/host.map)] if { var(txn.host),map(/etc/haproxy/maps/host.map) -m found }
    errorfile 503 /etc/haproxy/general/503.http
    default_backend default_404

backend default_404
    http-request return status 404 content-type text/plain string "no route"
`)
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "\n# Service shop/svc-%02d\nbackend shop_svc-%02d_http\n    balance roundrobin\n", i, i)
		fmt.Fprintf(&b, "    http-request set-header X-Forwarded-Proto https if { ssl_fc }\n")
		for _, s := range servers(i) {
			b.WriteString("    " + s + "\n")
		}
	}
	b.WriteString(extra)
	return b.String()
}

func endpoints(be, n int) []string {
	var out []string
	for j := 1; j <= n; j++ {
		out = append(out, fmt.Sprintf("server ep%d 10.244.%d.%d:8080 check weight 100", j, be, j))
	}
	return out
}

func hostMapFor(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "svc-%02d.shop.example.com shop_svc-%02d_http\n", i, i)
	}
	return b.String()
}

func realisticBundle(cfg, hostMap string) *bundle.Bundle {
	return bundle.New([]bundle.File{
		{Kind: bundle.KindConfig, Name: "haproxy.cfg", Content: bundle.TextOf(cfg)},
		{Kind: bundle.KindMap, Name: "host.map", Content: bundle.TextOf(hostMap)},
		{Kind: bundle.KindMap, Name: "path.map", Content: bundle.TextOf("svc-00.shop.example.com/api/ shop_svc-01_http\n")},
		{Kind: bundle.KindFile, Name: "503.http", Content: bundle.TextOf("HTTP/1.0 503 Service Unavailable\r\n\r\n")},
		{Kind: bundle.KindCrtList, Name: "crt.list", Content: bundle.TextOf("/etc/haproxy/ssl/default.pem\n")},
	})
}

// goldenView is what a golden file records: ops as the agent receives them.
type goldenView struct {
	Reload  bool              `json:"reload"`
	Ops     []json.RawMessage `json:"ops"`
	Reasons []string          `json:"reasons"`
	Files   []string          `json:"files"`
}

func TestGolden(t *testing.T) {
	twoEach := func(be int) []string { return endpoints(be, 2) }
	running := realisticBundle(realisticConfig(twoEach, ""), hostMapFor(19))

	scaled := func(be int) []string {
		switch be {
		case 3: // scale 2 → 4
			return endpoints(be, 4)
		case 7: // scale 2 → 1
			return endpoints(be, 1)
		case 11: // pod rescheduled: new address
			return []string{strings.Replace(endpoints(be, 2)[0], "10.244.11.1", "10.244.99.1", 1), endpoints(be, 2)[1]}
		case 12: // weight and maintenance
			eps := endpoints(be, 2)
			return []string{strings.Replace(eps[0], "weight 100", "weight 50", 1), eps[1] + " disabled"}
		}
		return endpoints(be, 2)
	}
	// svc-19's route is published, svc-05's withdrawn.
	routes := strings.Replace(hostMapFor(20), "svc-05.shop.example.com shop_svc-05_http\n", "", 1)

	tests := []struct {
		name    string
		desired *bundle.Bundle
	}{
		{"endpoint_churn_and_routes", realisticBundle(realisticConfig(scaled, ""), routes)},
		{"new_service_on_2.6", realisticBundle(realisticConfig(scaled, "\nbackend shop_svc-20_http\n    balance roundrobin\n    server ep1 10.244.20.1:8080 check\n"), routes)},
		{"structural_frontend_change", realisticBundle(
			strings.Replace(realisticConfig(twoEach, ""), "compression algo gzip", "compression algo gzip deflate", 1), hostMapFor(19))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Plan(Running{Bundle: running}, tt.desired, caps26)
			view := goldenView{Reload: res.Reload, Reasons: reasonStrings(res.Reasons)}
			for _, op := range res.Ops {
				b, err := json.Marshal(op)
				if err != nil {
					t.Fatal(err)
				}
				view.Ops = append(view.Ops, b)
			}
			for _, f := range res.Files {
				view.Files = append(view.Files, f.Target())
			}
			golden.AssertJSON(t, filepath.Join("testdata", tt.name+".golden.json"), view)
		})
	}
}
