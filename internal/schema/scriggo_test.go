package schema

import (
	"reflect"
	"strings"
	"testing"

	"github.com/open2b/scriggo"
	"github.com/open2b/scriggo/native"
)

// TestScriggoTypedAccess proves the point of the package: built types are usable
// Go-style from Scriggo v0.60.0 templates, as one value and as a slice of values.
func TestScriggoTypedAccess(t *testing.T) {
	r := bundled(t)
	ingType := mustType(t, r, "networking.k8s.io/v1", "ingresses")
	svcType := mustType(t, r, "v1", "services")
	ing, err := ingType.Convert(loadYAML(t, "testdata/ingress.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := svcType.Convert(loadYAML(t, "testdata/service.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// A global variable is declared by a nil pointer of its type (a non-nil pointer
	// would also initialise it); Run's vars then supply a pointer to the value.
	ptrIng := reflect.PointerTo(ingType.Go)
	ingresses := reflect.MakeSlice(reflect.SliceOf(ptrIng), 0, 2)
	ingresses = reflect.Append(ingresses, ing, ing)
	ingressesPtr := reflect.New(ingresses.Type())
	ingressesPtr.Elem().Set(ingresses)

	const src = `host={{ ing.Spec.Rules[0].Host }}
{% for i, r := range ing.Spec.Rules %}rule {{ i }} {{ r.Host }}{% for _, p := range r.Http.Paths %}{% if p.Backend.Service != nil %} {{ p.Path }}->{{ p.Backend.Service.Name }}:{{ p.Backend.Service.Port.Number }}{% else %} {{ p.Path }}->{{ p.Backend.Resource.Kind }}{% end %}{% end %}
{% end %}{% if ing.Spec.DefaultBackend == nil %}no default backend{% end %}
count={{ len(ingresses) }}{% for _, x := range ingresses %} {{ x.Metadata.Namespace }}/{{ x.Metadata.Name }}{% end %}
{% for _, p := range svc.Spec.Ports %}{{ p.Name }}={{ p.Port }}->{{ p.TargetPort }} {% end %}app={{ svc.Spec.Selector["app"] }}`
	fsys := scriggo.Files{"index.txt": []byte(src)}
	tmpl, err := scriggo.BuildTemplate(fsys, "index.txt", &scriggo.BuildOptions{
		Globals: native.Declarations{
			"ing":       reflect.Zero(reflect.PointerTo(ptrIng)).Interface(),
			"svc":       reflect.Zero(reflect.PointerTo(reflect.PointerTo(svcType.Go))).Interface(),
			"ingresses": reflect.Zero(ingressesPtr.Type()).Interface(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	vars := map[string]any{"ing": ing.Interface(), "svc": svc.Interface(), "ingresses": ingressesPtr.Interface()}
	if err := tmpl.Run(&out, vars, nil); err != nil {
		t.Fatal(err)
	}
	want := `host=shop.example.com
rule 0 shop.example.com /->shop-web:80 /api->shop-api:0
rule 1 www.shop.example.com /->StorageBucket
no default backend
count=2 prod/shop prod/shop
http=80->http metrics=9100->9100 app=shop`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
