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
// # Map files and map entries
//
// ParseMapFile is the one map file reader; it follows HAProxy 2.6 byte for byte
// (checked against HAProxy in TestMapFileParsingRealHAProxy): the file is read in
// pieces of at most 16,383 bytes (fgets into tune.bufsize, config.MapFileBufSize),
// so a longer line loads as two entries, and each piece is split by
// config.SplitMapLine ('#' in the first byte is a comment, "  # x" is the entry "#"
// → "x"; the key runs to the first blank, CR, LF or NUL; the value to CR, LF or NUL,
// trailing blanks removed). `show map` leaves out an entry it cannot print in one buffer
// ("key value" over MaxShowMapEntry bytes), so DiffMap does not compare those.
//
// Keys and values come from Kubernetes objects, so they may be hostile. HAProxy's
// CLI ends a command at LF (and drops a CR before it), ends a key or value at NUL,
// splits commands on unescaped ';' and words on unescaped blanks, and treats a
// command ending in "<<" as the start of a payload: nothing is stored but the reply
// is empty, like a success. The rules that keep an entry exact in both the map file
// and the CLI are HAProxy syntax and have one home, internal/haproxy/config:
// config.CheckMapEntry (empty key, any control character, a blank in a key, a key
// starting with '#', a value starting or ending with white space, a trailing "<<",
// a "key value" line over config.MaxMapLine (16,000) bytes; the error is a
// *config.ContextError), config.CheckMapFile (every line of a map file) and
// config.SplitMapLine (one line as HAProxy loads it). The renderer and the agent
// apply the same functions. The map operations' Validate and Run check every entry
// too (and a value, which add/set map need), so a refused entry is never sent.
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
// RunOps runs a list of operations: consecutive set/add/del map operations go
// ';'-joined in lines under 8 KB (DoEach), one exchange with HAProxy instead of one
// per entry: on an idle machine twelve `add map` took 0.75 ms as twelve exchanges
// and 0.1 ms as one, and under load each exchange also waits for HAProxy's thread.
// HAProxy ends each command's output with an empty line; DoEach cuts the reply there,
// so every command of a line gets its own reply (single-line replies only).
//
// Keys and values must pass config.CheckMapEntry and are escaped for the CLI byte
// by byte (blank, ';' and '\' get a backslash; HAProxy removes it); a map command longer
// than MaxCommand (15,360 bytes: escaping can double an entry) is refused unsent, and
// the agent falls back to a reload. A reply other than the command's success reply
// is an error carrying HAProxy's text. Errors of map operations name the operation,
// the map and the key.
package runtime
