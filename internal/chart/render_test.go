package chart

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Where the chart is, from this package's directory.
var (
	chartDir   = filepath.Join("..", "..", "charts", "haptic")
	libraryDir = filepath.Join(chartDir, "libraries")
)

const (
	releaseName      = "haptic"
	releaseNamespace = "haptic-system"
	notesFile        = "haptic/templates/NOTES.txt"
)

var (
	loadOnce  sync.Once
	loaded    *chartv2.Chart
	loadError error
)

// loadChart loads the chart directory with Helm's loader (once per test binary).
func loadChart(t *testing.T) *chartv2.Chart {
	t.Helper()
	loadOnce.Do(func() { loaded, loadError = loader.LoadDir(chartDir) })
	if loadError != nil {
		t.Fatalf("load chart: %v", loadError)
	}
	return loaded
}

// rendered is one `helm template`: the output by template file, and NOTES.txt.
// Manifests are parsed when a test asks for them (the config is large).
type rendered struct {
	files  map[string]string
	notes  string
	parsed map[string][]object
}

// object is one parsed manifest and the template it came from.
type object struct {
	file string
	obj  map[string]any
}

func (o object) kind() string { s, _ := o.obj["kind"].(string); return s }
func (o object) name() string { s, _ := field(o.obj, "metadata", "name").(string); return s }

// renderChart renders the chart as `helm install` would (user values over the
// chart's defaults, IsInstall), with lookup answered by the given function (nil:
// Helm's placeholder, which finds nothing).
func renderChart(t *testing.T, vals map[string]any, lookup func(apiVersion, kind, ns, name string) (map[string]any, error)) *rendered {
	t.Helper()
	r, err := tryRender(t, vals, lookup)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

func tryRender(t *testing.T, vals map[string]any, lookup func(apiVersion, kind, ns, name string) (map[string]any, error)) (*rendered, error) {
	t.Helper()
	return renderWith(t, loadChart(t), vals, lookup)
}

// renderWith renders a given chart (e.g. one with replaced library files).
func renderWith(t *testing.T, ch *chartv2.Chart, vals map[string]any, lookup func(apiVersion, kind, ns, name string) (map[string]any, error)) (*rendered, error) {
	t.Helper()
	values, err := util.ToRenderValues(ch, copyValues(t, vals), common.ReleaseOptions{
		Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true,
	}, nil)
	if err != nil {
		return nil, err
	}
	e := engine.Engine{Strict: false}
	if lookup != nil {
		e.CustomTemplateFuncs = map[string]any{"lookup": lookup}
	}
	files, err := e.RenderWithContext(context.Background(), ch, values)
	if err != nil {
		return nil, err
	}
	return &rendered{files: files, notes: files[notesFile], parsed: map[string][]object{}}, nil
}

// manifestFiles are the rendered files that hold manifests, sorted.
func (r *rendered) manifestFiles() []string {
	var names []string
	for name := range r.files {
		if strings.HasSuffix(name, ".yaml") && !strings.HasPrefix(filepath.Base(name), "_") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// parse parses the manifests of one rendered file (once).
func (r *rendered) parse(t *testing.T, name string) []object {
	t.Helper()
	if objs, ok := r.parsed[name]; ok {
		return objs
	}
	docs, err := splitManifests(r.files[name])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var objs []object
	for _, d := range docs {
		objs = append(objs, object{file: name, obj: d})
	}
	r.parsed[name] = objs
	return objs
}

// all parses every manifest.
func (r *rendered) all(t *testing.T) []object {
	t.Helper()
	var out []object
	for _, name := range r.manifestFiles() {
		out = append(out, r.parse(t, name)...)
	}
	return out
}

// copyValues deep-copies user values through JSON, as Helm reads them from YAML.
func copyValues(t *testing.T, vals map[string]any) map[string]any {
	t.Helper()
	if vals == nil {
		return map[string]any{}
	}
	data, err := json.Marshal(vals)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// splitManifests parses every YAML document of a rendered template strictly
// (duplicate keys are errors); empty documents are skipped.
func splitManifests(text string) ([]map[string]any, error) {
	rd := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	var out []map[string]any
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var m map[string]any
		if err := yaml.UnmarshalStrict(doc, &m); err != nil {
			return nil, err
		}
		if m != nil {
			out = append(out, m)
		}
	}
}

func stripComments(doc []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("---")) {
			out.Write(t)
		}
	}
	return out.Bytes()
}

// find returns the objects of a kind (parsing only files that name the kind).
func (r *rendered) find(t *testing.T, kind string) []object {
	t.Helper()
	line := regexp.MustCompile(`(?m)^kind: ` + regexp.QuoteMeta(kind) + `\s*$`)
	var out []object
	for _, name := range r.manifestFiles() {
		if !line.MatchString(r.files[name]) {
			continue
		}
		for _, o := range r.parse(t, name) {
			if o.kind() == kind {
				out = append(out, o)
			}
		}
	}
	return out
}

// one returns the only object of a kind, failing otherwise.
func (r *rendered) one(t *testing.T, kind string) map[string]any {
	t.Helper()
	objs := r.find(t, kind)
	if len(objs) != 1 {
		t.Fatalf("want one %s, got %d", kind, len(objs))
	}
	return objs[0].obj
}

// named returns the object of a kind and name, failing when there is none.
func (r *rendered) named(t *testing.T, kind, name string) map[string]any {
	t.Helper()
	for _, o := range r.find(t, kind) {
		if o.name() == name {
			return o.obj
		}
	}
	t.Fatalf("no %s %q rendered", kind, name)
	return nil
}

// field walks nested maps; nil when a step is missing.
func field(m any, path ...string) any {
	cur := m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

// normalize makes values comparable whatever YAML parser produced them (numbers
// become float64, as after a JSON round trip).
func normalize(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func equal(t *testing.T, a, b any) bool {
	t.Helper()
	return reflect.DeepEqual(normalize(t, a), normalize(t, b))
}

// containers returns a pod template's containers of a Deployment.
func containers(t *testing.T, deployment map[string]any) []map[string]any {
	t.Helper()
	list, _ := field(deployment, "spec", "template", "spec", "containers").([]any)
	var out []map[string]any
	for _, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			t.Fatalf("container is %T", c)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		t.Fatal("deployment has no containers")
	}
	return out
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
