package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// Execer runs one CLI command line; *Client is one.
type Execer interface {
	Do(ctx context.Context, command string) (string, error)
}

// MapPath turns a map's bundle name (e.g. "host.map") into the path HAProxy knows the
// map by (the file the configuration references).
type MapPath func(name string) string

// Operation is one typed runtime operation. The kinds are the structs below.
type Operation interface {
	// Kind is the JSON "op" value.
	Kind() string
	// Validate checks the fields without touching HAProxy.
	Validate() error
	// Run applies the operation through x.
	Run(ctx context.Context, x Execer, maps MapPath) error
}

// Op is the JSON envelope of an Operation: {"op":"<kind>", ...the kind's fields}.
type Op struct{ Operation }

var kinds = map[string]func() Operation{
	"set-map":           func() Operation { return &SetMap{} },
	"add-map":           func() Operation { return &AddMap{} },
	"del-map":           func() Operation { return &DelMap{} },
	"replace-map":       func() Operation { return &ReplaceMap{} },
	"add-server":        func() Operation { return &AddServer{} },
	"del-server":        func() Operation { return &DelServer{} },
	"set-server-addr":   func() Operation { return &SetServerAddr{} },
	"set-server-state":  func() Operation { return &SetServerState{} },
	"set-server-weight": func() Operation { return &SetServerWeight{} },
}

// MarshalJSON writes the kind's fields with "op" first.
func (o Op) MarshalJSON() ([]byte, error) {
	if o.Operation == nil {
		return nil, fmt.Errorf("marshal op: empty operation")
	}
	body, err := json.Marshal(o.Operation)
	if err != nil {
		return nil, fmt.Errorf("marshal op %s: %w", o.Kind(), err)
	}
	head := `{"op":` + strconv.Quote(o.Kind())
	if string(body) == "{}" {
		return []byte(head + "}"), nil
	}
	return []byte(head + "," + string(body[1:])), nil
}

// UnmarshalJSON picks the struct by "op" and rejects unknown fields.
func (o *Op) UnmarshalJSON(data []byte) error {
	var head struct {
		Op string `json:"op"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("op: %w", err)
	}
	mk, ok := kinds[head.Op]
	if !ok {
		return fmt.Errorf("op: unknown kind %q", head.Op)
	}
	op := mk()
	// Strip "op" so the strict decoder accepts the rest.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("op %s: %w", head.Op, err)
	}
	delete(fields, "op")
	rest, _ := json.Marshal(fields)
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(op); err != nil {
		return fmt.Errorf("op %s: %w", head.Op, err)
	}
	o.Operation = op
	return nil
}

// SetMap sets the value of an existing key: `set map`.
type SetMap struct {
	Map   string `json:"map"`
	Key   string `json:"key"`
	Value string `json:"value"`
}

// AddMap adds a key: `add map`.
type AddMap struct {
	Map   string `json:"map"`
	Key   string `json:"key"`
	Value string `json:"value"`
}

// DelMap deletes a key: `del map`. A key that is already absent counts as done.
type DelMap struct {
	Map string `json:"map"`
	Key string `json:"key"`
}

// ReplaceMap atomically replaces a map's whole content: `prepare map`, batched
// `add map @ver`, `commit map @ver`.
type ReplaceMap struct {
	Map     string     `json:"map"`
	Entries []MapEntry `json:"entries"`
}

// AddServer adds a dynamic server (`add server`). HAProxy starts it in maintenance;
// it is enabled (`enable server`, plus `enable health` with Check) unless Disabled.
type AddServer struct {
	Backend  string `json:"backend"`
	Server   string `json:"server"`
	Address  string `json:"address"`
	Port     int    `json:"port"`
	Weight   int    `json:"weight,omitempty"`
	Check    bool   `json:"check,omitempty"`
	Disabled bool   `json:"disabled,omitempty"`
	// Options are further words of the server line, keyword then values, each
	// keyword one of AddServerOptions (TLS to the server, HTTP/2, health-check
	// timing). An agent older than this field refuses it (unknown field).
	Options []string `json:"options,omitempty"`
}

// AddServerOptions are the server keywords AddServer.Options may carry, with their
// number of values: what HAProxy 2.6's `add server` accepts of TLS (ssl,
// certificates, SNI, ALPN), the HTTP/2 proto and health-check timing.
var AddServerOptions = map[string]int{
	"ssl": 0, "verify": 1, "ca-file": 1, "crt": 1, "sni": 1, "verifyhost": 1, "check-sni": 1,
	"alpn": 1, "check-alpn": 1, "proto": 1,
	"inter": 1, "fastinter": 1, "downinter": 1, "fall": 1, "rise": 1, "maxconn": 1,
}

// optionWordRe is what one word of AddServer.Options may hold: printable ASCII
// without blanks, the CLI's command separator, comment and quoting characters.
var optionWordRe = regexp.MustCompile(`^[!$%&()*+,\-./0-9:<=>?@A-Z\[\]^_a-z{|}~]+$`)

// checkServerOptions refuses options that are not keyword-then-values of
// AddServerOptions, or whose words could end or extend the command.
func checkServerOptions(kind, be, srv string, words []string) error {
	for i := 0; i < len(words); {
		n, ok := AddServerOptions[words[i]]
		if !ok {
			return fmt.Errorf("%s %s/%s: server option %q is not supported by add server", kind, be, srv, words[i])
		}
		if i+n >= len(words) {
			return fmt.Errorf("%s %s/%s: server option %q needs %d value(s)", kind, be, srv, words[i], n)
		}
		for _, w := range words[i+1 : i+1+n] {
			if !optionWordRe.MatchString(w) {
				return fmt.Errorf("%s %s/%s: server option %q: value %s is not a plain word", kind, be, srv, words[i], quoteShort(w))
			}
		}
		i += 1 + n
	}
	return nil
}

// DelServer puts a server in maintenance and deletes it.
type DelServer struct {
	Backend string `json:"backend"`
	Server  string `json:"server"`
}

// SetServerAddr changes a server's address and port.
type SetServerAddr struct {
	Backend string `json:"backend"`
	Server  string `json:"server"`
	Address string `json:"address"`
	Port    int    `json:"port,omitempty"`
}

// SetServerState sets a server's admin state: ready, drain or maint.
type SetServerState struct {
	Backend string `json:"backend"`
	Server  string `json:"server"`
	State   string `json:"state"`
}

// SetServerWeight sets a server's weight (0-256).
type SetServerWeight struct {
	Backend string `json:"backend"`
	Server  string `json:"server"`
	Weight  int    `json:"weight"`
}

func (*SetMap) Kind() string          { return "set-map" }
func (*AddMap) Kind() string          { return "add-map" }
func (*DelMap) Kind() string          { return "del-map" }
func (*ReplaceMap) Kind() string      { return "replace-map" }
func (*AddServer) Kind() string       { return "add-server" }
func (*DelServer) Kind() string       { return "del-server" }
func (*SetServerAddr) Kind() string   { return "set-server-addr" }
func (*SetServerState) Kind() string  { return "set-server-state" }
func (*SetServerWeight) Kind() string { return "set-server-weight" }

var nameRe = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

func checkServer(kind, be, srv string) error {
	if !nameRe.MatchString(be) || !nameRe.MatchString(srv) {
		return fmt.Errorf("%s: invalid backend/server name %q/%q", kind, be, srv)
	}
	return nil
}

// checkMapName refuses map names that cannot be resolved to a path and sent safely.
func checkMapName(kind, name string) error {
	bad := name == "" || strings.ContainsAny(name, " ;") || strings.Contains(name, "..") ||
		strings.HasSuffix(name, payloadMarker)
	for i := 0; i < len(name) && !bad; i++ {
		bad = name[i] < 0x20 || name[i] == 0x7f
	}
	if bad {
		return fmt.Errorf("%s: invalid map name %q", kind, name)
	}
	return nil
}

// checkMapEntry checks the map name and one entry to send with add/set map
// (sendableEntry); the error names the operation, the map and the key.
func checkMapEntry(kind, name, key, value string) error {
	if err := checkMapName(kind, name); err != nil {
		return err
	}
	if err := sendableEntry(key, value); err != nil {
		return fmt.Errorf("%s %s key %s: %w", kind, name, quoteShort(key), err)
	}
	return nil
}

// errEmptyValue: add map and set map answer "'add map' expects three parameters"
// to a command without a value.
var errEmptyValue = &config.ContextError{Context: "map value", Value: "", Reason: "is empty (add map and set map need a value)"}

// sendableEntry is config.CheckMapEntry plus what the CLI needs beyond the file: a
// value.
func sendableEntry(key, value string) error {
	if err := config.CheckMapEntry(key, value); err != nil {
		return err
	}
	if value == "" {
		return errEmptyValue
	}
	return nil
}

func checkAddr(kind, addr string, port int) error {
	if net.ParseIP(addr) == nil {
		return fmt.Errorf("%s: address %q is not an IP", kind, addr)
	}
	if port < 0 || port > 65535 {
		return fmt.Errorf("%s: port %d out of range", kind, port)
	}
	return nil
}

func (o *SetMap) Validate() error { return checkMapEntry(o.Kind(), o.Map, o.Key, o.Value) }
func (o *AddMap) Validate() error { return checkMapEntry(o.Kind(), o.Map, o.Key, o.Value) }
func (o *DelMap) Validate() error {
	if err := checkMapName(o.Kind(), o.Map); err != nil {
		return err
	}
	if err := config.CheckMapKey(o.Key); err != nil {
		return fmt.Errorf("%s %s key %s: %w", o.Kind(), o.Map, quoteShort(o.Key), err)
	}
	return nil
}
func (o *ReplaceMap) Validate() error {
	if err := checkMapName(o.Kind(), o.Map); err != nil {
		return err
	}
	for i, e := range o.Entries {
		if err := sendableEntry(e.Key, e.Value); err != nil {
			return fmt.Errorf("%s %s entry %d key %s: %w", o.Kind(), o.Map, i, quoteShort(e.Key), err)
		}
	}
	return nil
}
func (o *AddServer) Validate() error {
	if err := checkServer(o.Kind(), o.Backend, o.Server); err != nil {
		return err
	}
	if o.Port < 1 {
		return fmt.Errorf("%s %s/%s: port is required", o.Kind(), o.Backend, o.Server)
	}
	if o.Weight < 0 || o.Weight > 256 {
		return fmt.Errorf("%s %s/%s: weight %d out of range", o.Kind(), o.Backend, o.Server, o.Weight)
	}
	if err := checkServerOptions(o.Kind(), o.Backend, o.Server, o.Options); err != nil {
		return err
	}
	return checkAddr(o.Kind(), o.Address, o.Port)
}
func (o *DelServer) Validate() error { return checkServer(o.Kind(), o.Backend, o.Server) }
func (o *SetServerAddr) Validate() error {
	if err := checkServer(o.Kind(), o.Backend, o.Server); err != nil {
		return err
	}
	return checkAddr(o.Kind(), o.Address, o.Port)
}
func (o *SetServerState) Validate() error {
	if err := checkServer(o.Kind(), o.Backend, o.Server); err != nil {
		return err
	}
	switch o.State {
	case "ready", "drain", "maint":
		return nil
	}
	return fmt.Errorf("%s %s/%s: state %q is not ready, drain or maint", o.Kind(), o.Backend, o.Server, o.State)
}
func (o *SetServerWeight) Validate() error {
	if err := checkServer(o.Kind(), o.Backend, o.Server); err != nil {
		return err
	}
	if o.Weight < 0 || o.Weight > 256 {
		return fmt.Errorf("%s %s/%s: weight %d out of range", o.Kind(), o.Backend, o.Server, o.Weight)
	}
	return nil
}
