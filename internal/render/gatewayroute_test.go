package render

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
)

func TestHTTPRouteNative(t *testing.T) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(`{
	  "metadata": {"namespace": "team", "name": "web", "creationTimestamp": "2026-01-01T00:00:00Z"},
	  "spec": {
	    "parentRefs": [{"name": "gw", "sectionName": "http", "port": 8080}, {"kind": "ListenerSet", "namespace": "infra", "name": "ls"}],
	    "hostnames": ["a.example.com"],
	    "rules": [
	      {"matches": [{"path": {"type": "Exact", "value": "/x"}, "headers": [{"name": "h", "value": "v"}], "method": "GET"}],
	       "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "a", "value": "1"}], "remove": []}},
	                   {"type": "RequestRedirect", "requestRedirect": {"statusCode": 301, "path": {"type": "ReplaceFullPath", "replaceFullPath": "/y"}}},
	                   {"type": "CORS", "cors": {"allowOrigins": ["*"], "allowCredentials": true, "maxAge": 5}}],
	       "backendRefs": [{"name": "svc", "port": 80, "weight": 2,
	                        "filters": [{"type": "ResponseHeaderModifier", "responseHeaderModifier": {"add": [{"name": "b", "value": "2"}]}}]}],
	       "retry": {"attempts": 3, "codes": [503]},
	       "timeouts": {"request": "1s"}},
	      {}
	    ]
	  }}`), &obj); err != nil {
		t.Fatal(err)
	}
	got := httpRouteNative(obj["metadata"].(map[string]any), obj["spec"].(map[string]any))
	want := &gwRoute{
		kind: "HTTPRoute", id: "HTTPRoute team/web", wkey: "@h/team/web", namespace: "team", name: "web",
		created: "2026-01-01T00:00:00Z", hostnames: []string{"a.example.com"},
		parents: []gwParent{
			{group: gatewayGroup, kind: "Gateway", name: "gw", namespace: "team", section: "http", port: "8080"},
			{group: gatewayGroup, kind: "ListenerSet", name: "ls", namespace: "infra", section: "", port: "0"},
		},
		rules: []gwRule{
			{
				field: "spec.rules[0]", key: "@h/team/web/0",
				matches: []gwMatch{{ptype: "Exact", pvalue: "/x", pfield: "spec.rules[0].matches[0].path.value",
					field: "spec.rules[0].matches[0]", headers: [][]string{{"Exact", "h", "v"}}, method: "GET"}},
				filters: []gwFilter{
					// an empty remove list stays a list: its JSON names backends
					{typ: "RequestHeaderModifier", field: "spec.rules[0].filters[0]",
						request: map[string]any{"set": [][]string{{"a", "1"}}, "add": [][]string(nil), "remove": []string{}}},
					{typ: "RequestRedirect", field: "spec.rules[0].filters[1]", redirect: map[string]string{
						"scheme": "", "hostname": "", "port": "0", "code": "301", "pathType": "ReplaceFullPath", "full": "/y", "prefix": ""}},
					{typ: "CORS", field: "spec.rules[0].filters[2]", cors: map[string]any{"origins": []string{"*"}, "credentials": true,
						"methods": []string(nil), "headers": []string(nil), "expose": []string(nil), "maxAge": 5}},
				},
				backends: []gwBackendRef{{group: "", kind: "Service", name: "svc", namespace: "team", port: 80, weight: 2,
					field: "spec.rules[0].backendRefs[0]", filters: []gwFilter{{typ: "ResponseHeaderModifier",
						field:    "spec.rules[0].backendRefs[0].filters[0]",
						response: map[string]any{"set": [][]string(nil), "add": [][]string{{"b", "2"}}, "remove": []string(nil)}}},
					target: "gw_team_svc_80"}},
				retries: 3, retryCodes: []int{503},
				timeouts: [][]string{{"request", "1s"}, {"backendRequest", ""}},
			},
			{
				field: "spec.rules[1]", key: "@h/team/web/1",
				matches: []gwMatch{{ptype: "PathPrefix", pvalue: "/", pfield: "spec.rules[1]", field: "spec.rules[1]"}},
			},
		},
		order: routeOrderEntry{key: "2026-01-01T00:00:00Z team/web HTTPRoute", item: []string{"HTTPRoute", "team", "web"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("native form:\n%#v\nwant:\n%#v", got, want)
	}
	ops, _ := json.Marshal(got.rules[0].filters[0].request)
	if string(ops) != `{"add":null,"remove":[],"set":[["a","1"]]}` {
		t.Errorf("request ops JSON %s", ops)
	}
}

func TestLabelsSelected(t *testing.T) {
	labels := map[string]string{"team": "a", "env": "prod"}
	for _, c := range []struct {
		match map[string]string
		exprs [][]string
		want  bool
	}{
		{nil, nil, true},
		{map[string]string{"team": "a"}, nil, true},
		{map[string]string{"team": "b"}, nil, false},
		{map[string]string{"owner": ""}, nil, false}, // a missing label is not an empty one
		{nil, [][]string{{"env", "In", "dev", "prod"}}, true},
		{nil, [][]string{{"env", "In", "dev"}}, false},
		{nil, [][]string{{"env", "NotIn", "prod"}}, false},
		{nil, [][]string{{"owner", "NotIn", "x"}}, true},
		{nil, [][]string{{"team", "Exists"}}, true},
		{nil, [][]string{{"owner", "Exists"}}, false},
		{nil, [][]string{{"owner", "DoesNotExist"}}, true},
		{nil, [][]string{{"team", "DoesNotExist"}}, false},
		{nil, [][]string{{"team", "Gt", "1"}}, false}, // unknown operators select nothing
		{map[string]string{"team": "a"}, [][]string{{"env", "In", "prod"}, {"team", "NotIn", "a"}}, false},
	} {
		if got := labelsSelected(c.match, c.exprs, labels); got != c.want {
			t.Errorf("labelsSelected(%v, %v) = %v, want %v", c.match, c.exprs, got, c.want)
		}
	}
}

func TestRegexProblem(t *testing.T) {
	for re, want := range map[string]string{
		"":             "is empty",
		"/a b":         "holds whitespace or '#'",
		"/a#":          "holds whitespace or '#'",
		`/a\`:          "ends with a lone backslash",
		"/[a-z":        "has an unclosed '['",
		`/[\]`:         "has an unclosed '['",
		"*a":           "has a repetition operator with nothing to repeat",
		"/(*a)":        "has a repetition operator with nothing to repeat",
		"/a**":         "has a repetition operator with nothing to repeat",
		"/(?P<n>a)":    "uses a group construct other than (?:",
		"/a)":          "has an unbalanced ')'",
		"/(a":          "has an unbalanced '('",
		"/[a](":        "has an unbalanced '('", // checking goes on after a class
		"/a{2}{3}":     "has a repetition operator with nothing to repeat",
		"/[]a]+":       "",
		`/[\]]+`:       "",
		"/a+?":         "",
		"/a{2,3}?":     "",
		"/a{x}":        "", // not a count: a literal
		"/(?:a|b)*$":   "",
		"^/v[0-9]+/.*": "",
	} {
		if got := regexProblem(re); got != want {
			t.Errorf("regexProblem(%q) = %q, want %q", re, got, want)
		}
	}
}

func TestGRPCRouteNativeMethods(t *testing.T) {
	for _, c := range []struct {
		method              string
		ptype, pvalue, fail string
	}{
		{`{}`, "PathPrefix", "/", ""},
		{`{"service": "pkg.Svc", "method": "Get"}`, "Exact", "/pkg.Svc/Get", ""},
		{`{"service": "pkg.Svc"}`, "PathPrefix", "/pkg.Svc", ""},
		{`{"method": "Get"}`, "RegularExpression", "/[^/]+/Get", ""},
		{`{"type": "RegularExpression", "service": "pkg\\..*"}`, "RegularExpression", `/(?:pkg\..*)/(?:[^/]+)`, ""},
		{`{"service": "pkg/Svc"}`, "", "", `GRPCRoute ns/r: spec.rules[0].matches[0].method.service: "pkg/Svc" is not a gRPC service name`},
		{`{"service": "Svc", "method": "Get x"}`, "", "", `GRPCRoute ns/r: spec.rules[0].matches[0].method.method: "Get x" is not a gRPC method name`},
	} {
		var spec map[string]any
		if err := json.Unmarshal([]byte(`{"rules": [{"matches": [{"method": `+c.method+`}]}]}`), &spec); err != nil {
			t.Fatal(err)
		}
		got := grpcRouteNative(map[string]any{"namespace": "ns", "name": "r"}, spec)
		if c.fail != "" {
			if got.err != c.fail {
				t.Errorf("%s: error %q, want %q", c.method, got.err, c.fail)
			}
			continue
		}
		m := got.rules[0].matches[0]
		if m.ptype != c.ptype || m.pvalue != c.pvalue || !got.h2 || got.wkey != "@g/ns/r" {
			t.Errorf("%s: %v %v (h2 %v, wkey %v), want %s %s", c.method, m.ptype, m.pvalue, got.h2, got.wkey, c.ptype, c.pvalue)
		}
	}
}

// Patterns from objects cannot grow the compiled-pattern cache past its bound; past
// it a pattern still matches (compiled at each use).
func TestRegexCacheBounded(t *testing.T) {
	for i := range regexCacheMax + 100 {
		if !regexMatch("^/bounded-"+strconv.Itoa(i)+"$", "/bounded-"+strconv.Itoa(i)) {
			t.Fatalf("pattern %d did not match", i)
		}
	}
	n := 0
	regexCache.Range(func(any, any) bool { n++; return true })
	if n > regexCacheMax || regexCacheSize.Load() > regexCacheMax {
		t.Errorf("%d patterns cached (counted %d), bound %d", n, regexCacheSize.Load(), regexCacheMax)
	}
}
