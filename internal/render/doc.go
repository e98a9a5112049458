// Package render turns a snapshot into a bundle by running the config's Scriggo
// templates: haproxy.cfg, every map, general file, certificate and crt-list.
//
// Templates are compiled once per config (Compile) and rendered many times (Render),
// concurrently if needed. Snippets are included by name (`render "name"`) or by name
// pattern (`render_glob "backends-*"`, sorted by priority, then name); the pattern form
// is expanded when the config is compiled, because Scriggo resolves included files at
// compile time.
//
// Templates read watched resources in one of two dialects, chosen by
// templatingSettings.resourceAccess:
//
//	typed (default):  resources.Ingresses.List() returns []*T, where T is a struct
//	                  built from the resource's OpenAPI schema: ing.Spec.IngressClassName
//	untyped:          resources["ingresses"].List() returns []map[string]any
//
// In the typed dialect a watched resource's name becomes an exported field name
// (ingresses → Ingresses, http-routes → HttpRoutes). A resource without a schema is
// still reachable, with map[string]any elements. Every store offers List(),
// Fetch(keys...) and GetSingle(keys...), whose keys follow the resource's indexBy.
//
// A render records what each fragment reads and reuses what did not change (memo.go,
// units.go); Go helpers read the stores through a reader that records for them
// (resources.go), which lets a helper compute independent values on every core
// (apart.go).
//
// Output is normalised after rendering (trailing spaces and blank-line runs removed,
// haproxy.cfg indented by section) so that templates need no whitespace control and
// the same input always gives byte-identical output.
package render
