// Package runtime is a small client for HAProxy's CLI sockets: the master socket
// (`-S`, master-worker mode: reload, show proc) and a worker's stats socket (the
// runtime API: maps, servers, show info). One command line per connection in
// non-interactive mode; the reply is read until HAProxy closes the connection (the
// client half-closes its side, which the master CLI needs). Dials are retried while
// the socket refuses connections (the master does during a reload), within a bound.
//
// Parsers for `show proc` (master, workers, "[failed: N]"), `show info`, `show servers
// state`, `show map` and the `show map` listing are tested on outputs captured from
// HAProxy 2.6.12 (testdata/). ParseVersion and CapabilitiesOf turn a version string
// (`haproxy -v`, `show info`) into the runtime features it offers (`add backend` needs
// 3.4).
//
// # Reading back
//
// ShowServersState and ShowMap run `show servers state <backend>` and `show map
// <file>` and parse the reply (HAProxy's error text, e.g. "Can't find backend.", is
// the error). ServerState.Maint tells maintenance (forced, config "disabled",
// inherited, resolver, health) from ready or drain. ParseMapFile reads a map file as
// HAProxy loads it, and DiffMap compares wanted and running entries as multisets: a
// map changed at runtime lists re-added keys last, so order is not compared.
//
// # Operations
//
// Runtime operations are typed: one struct per kind, each with Validate and Run. On
// the wire (the agent's POST /v1/runtime "operations" array) an operation is a JSON
// object whose "op" names the kind; unknown kinds and fields are rejected. Maps are
// named by their bundle file name and resolved to the path HAProxy loaded them from.
//
//	{"op":"set-map",    "map":"host.map","key":"a.test","value":"be_a"}    set map (key must exist)
//	{"op":"add-map",    "map":"host.map","key":"a.test","value":"be_a"}    add map
//	{"op":"del-map",    "map":"host.map","key":"a.test"}                   del map (absent key = done)
//	{"op":"replace-map","map":"host.map","entries":[{"key":"a.test","value":"be_a"}]}
//	        prepare map; add map @ver batched into ';'-joined lines under 8 KB; commit map @ver
//	{"op":"add-server", "backend":"be","server":"s1","address":"10.0.0.1","port":8080,
//	        "weight":10, "check":false, "disabled":false}
//	        add server (starts in maintenance), then enable health (with check) and
//	        enable server unless disabled
//	{"op":"del-server", "backend":"be","server":"s1"}                     set server state maint; del server
//	{"op":"set-server-addr",  "backend":"be","server":"s1","address":"10.0.0.2","port":8081}
//	{"op":"set-server-state", "backend":"be","server":"s1","state":"ready|drain|maint"}
//	{"op":"set-server-weight","backend":"be","server":"s1","weight":0..256}
//
// Keys and values are escaped for the CLI (blank, ';' and '\' get a backslash) and
// may not contain newlines. A reply other than the command's success reply is an
// error carrying HAProxy's text.
package runtime
