// Package plan decides how to bring a running HAProxy from one rendered bundle to
// another: with typed runtime operations (internal/haproxy/runtime) when every
// difference can be applied live, or with a reload whose reasons are named
// (section and directive). It is pure: no I/O, no clock, and the same input always
// gives the same output (operations and reasons are sorted, map iteration order
// never leaks).
//
// # Parser
//
// haproxy.cfg is read by internal/haproxy/config (config.Parse: sections and
// directives, words split as HAProxy's line parser does; config.ReadServer: server
// lines), the same parser the renderer's checks and the agent's read-back use. Plan
// adds what is its own: which server options the runtime can change
// (runtimeServerOptions) and which ones add server can express.
//
// # Classification
//
//   - Identical bundles: nothing. Files whose differences HAProxy does not see
//     (comments, blank lines) need no operation; they are listed in Result.Files.
//   - haproxy.cfg: compared section by section (sections are matched by keyword,
//     name and occurrence). In a backend or listen whose only differences are
//     `server` lines: removed → del-server (maintenance, then delete); added →
//     add-server (address, port, weight, check; enabled unless `disabled`);
//     address/port → set-server-addr; weight → set-server-weight; disabled ↔
//     enabled → set-server-state maint|ready. These reload instead, with a reason:
//     a balance algorithm other than roundrobin/leastconn (for add, del and weight;
//     2.6 refuses dynamic servers on static and hash algorithms), a server option
//     outside an allowlist (cookie, track, …: anything `add server` cannot express;
//     TLS, proto and check timing go along as runtime.AddServerOptions), a new
//     server's ca-file or crt that the running configuration names nowhere (2.6's
//     add server finds them only in HAProxy's store, never on disk), a name or
//     hostname address, a default-server option that dynamic servers would not
//     inherit, and 2.6's lack of dynamic servers on older versions.
//   - A new backend: HAProxy before 3.4 has no `add backend` (and the runtime
//     package has none for 3.4 yet), so a new backend takes a spare one that runs:
//     a pool backend (name starts with PoolPrefix, declared empty by the template)
//     or a backend whose routes were removed — one with no servers whose header,
//     non-server directives and defaults equal the new one's. Its servers are added
//     there, map entries that name the new backend name the spare instead, and
//     Running.Aliases remembers the renaming for the next Plan. No spare: reload,
//     naming the backend. A removed backend stays running without its servers (map
//     entries go first) and becomes a spare. The next reload runs the desired names
//     and refills the pool. Any other directive added, removed, changed or moved, in
//     any section, and any section other than a backend added or removed, reloads.
//   - Maps: entries ("key value", key up to the first blank) are diffed, in hunks
//     (a route's lines land apart in a sorted map: the entries between them cost
//     nothing). Up to MaxSingleMapOps changes become add-map/set-map/del-map;
//     more, duplicate keys, or an order that single operations cannot reproduce
//     for a map used with an order-sensitive match (map_beg, map_reg, an ACL -f,
//     …) become one replace-map (prepare, add @ver, commit). A map that is added
//     or removed reloads: HAProxy resolves map paths when it parses the
//     configuration.
//   - Certificates (HAProxy 2.2+): a changed or new certificate that a crt-list line
//     or a bind `crt` references is set in HAProxy's store (new ssl cert, set ssl
//     cert, commit) — by the path HAProxy knows it by — before any crt-list line
//     points at it; one nothing references is only written. A removed certificate
//     stays in the store and on disk until the next reload (its crt-list line goes).
//   - crt-lists: lines are compared per certificate: new lines are added (`add ssl
//     crt-list`), removed ones deleted after map entries, changed ones replaced.
//     The first line (the bind's default certificate), a certificate on two lines,
//     and a crt-list added or removed reload. A CA file only servers use (their
//     ca-file) is replaced in HAProxy's store (set ssl ca-file, commit; 2.5+); a
//     bind's CA file and other files (error pages, …) reload.
//
// # Result
//
// With Reload set, Ops and Files are empty: the reload applies the whole desired
// bundle. Otherwise Ops are in a safe order — add servers (enabled), set addresses,
// set non-zero weights, enable servers, map adds/sets/replaces, map deletes, put
// servers in maintenance or weight 0, delete servers (del-server does maintenance
// then delete) — so new servers are up before any map entry points at them and map
// entries are gone before their servers. Within a step the order is by
// backend/server, or by the entry's position in its map file. Files are the files
// the operations make true, as they will run (spare names in place of new
// backends); Running is the whole resulting state, the input of the next Plan.
package plan
