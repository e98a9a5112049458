package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func files() []File {
	return []File{
		{Kind: KindCrtList, Name: "list.txt", Content: TextOf("/etc/haproxy/ssl/a.pem [alpn h2]\n")},
		{Kind: KindCert, Name: "b.pem", Content: TextOf("CERT B")},
		{Kind: KindMap, Name: "hosts.map", Content: TextOf("a.example.com be_a\n")},
		{Kind: KindFile, Name: "503.http", Content: TextOf("HTTP/1.0 503\r\n")},
		{Kind: KindCert, Name: "a.pem", Content: TextOf("CERT A")},
		{Kind: KindMap, Name: "backends.map", Content: TextOf("x y\n")},
		{Kind: KindConfig, Name: "haproxy.cfg", Content: TextOf("global\n")},
	}
}

func targets(b *Bundle) []string {
	var out []string
	for _, f := range b.Files {
		out = append(out, f.Target())
	}
	return out
}

func TestNewSortsAndHashes(t *testing.T) {
	in := files()
	inCopy := slices.Clone(in)
	b := New(in)
	want := []string{
		"haproxy.cfg",
		"map:backends.map", "map:hosts.map",
		"file:503.http",
		"cert:a.pem", "cert:b.pem",
		"crtlist:list.txt",
	}
	if got := targets(b); !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	if !slices.EqualFunc(in, inCopy, File.Equal) {
		t.Error("New modified its input")
	}
	for _, f := range b.Files {
		if f.Hash != HashContent(f.Content.String()) {
			t.Errorf("%s hash = %q, want HashContent", f.Target(), f.Hash)
		}
		if len(f.Hash) != 64 {
			t.Errorf("%s hash %q is not hex sha256", f.Target(), f.Hash)
		}
	}
	if len(b.Hash) != 64 {
		t.Errorf("bundle hash %q is not hex sha256", b.Hash)
	}
	// A stale hash in the input is recomputed.
	stale := files()
	stale[0].Hash = "stale"
	if New(stale).Hash != b.Hash {
		t.Error("an input Hash influenced the bundle hash")
	}
}

func TestHashContent(t *testing.T) {
	// sha256("") and sha256("abc"), well-known vectors
	if got := HashContent(""); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("HashContent(\"\") = %s", got)
	}
	if got := HashContent("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("HashContent(abc) = %s", got)
	}
}

func TestBundleHash(t *testing.T) {
	base := New(files()).Hash
	reversed := files()
	slices.Reverse(reversed)
	if New(reversed).Hash != base {
		t.Error("input order changed the bundle hash")
	}
	if New(files()).Hash != base {
		t.Error("equal content gave a different hash")
	}
	tests := []struct {
		name   string
		mutate func([]File) []File
	}{
		{"one content byte", func(fs []File) []File { fs[2].Content = TextOf("a.example.com be_b\n"); return fs }},
		{"content appended", func(fs []File) []File { fs[6].Content = TextOf(fs[6].Content.String() + " "); return fs }},
		{"renamed", func(fs []File) []File { fs[1].Name = "c.pem"; return fs }},
		{"kind changed", func(fs []File) []File { fs[3].Kind = KindMap; return fs }},
		{"file dropped", func(fs []File) []File { return fs[1:] }},
		{"file added", func(fs []File) []File { return append(fs, File{Kind: KindFile, Name: "x"}) }},
		// the separator keeps name and content from running into each other
		{"name/content boundary", func(fs []File) []File {
			return []File{{Kind: KindFile, Name: "ab", Content: TextOf("c")}}
		}},
	}
	seen := map[string]string{base: "base"}
	for _, tt := range tests {
		h := New(tt.mutate(files())).Hash
		if h == base {
			t.Errorf("%s: bundle hash unchanged", tt.name)
		}
		if prev, dup := seen[h]; dup {
			t.Errorf("%s: same hash as %s", tt.name, prev)
		}
		seen[h] = tt.name
	}
	a := New([]File{{Kind: KindFile, Name: "ab", Content: TextOf("c")}}).Hash
	b := New([]File{{Kind: KindFile, Name: "a", Content: TextOf("bc")}}).Hash
	if a == b {
		t.Error("name/content boundary is ambiguous in the bundle hash")
	}
	if New(nil).Hash == "" || New(nil).Hash != New([]File{}).Hash {
		t.Error("empty bundles should hash equally and non-empty")
	}
}

func TestGet(t *testing.T) {
	b := New(files())
	tests := []struct {
		target  string
		content string
		ok      bool
	}{
		{"haproxy.cfg", "global\n", true},
		{"map:hosts.map", "a.example.com be_a\n", true},
		{"map:backends.map", "x y\n", true},
		{"file:503.http", "HTTP/1.0 503\r\n", true},
		{"cert:a.pem", "CERT A", true},
		{"crtlist:list.txt", "/etc/haproxy/ssl/a.pem [alpn h2]\n", true},
		{"map:missing.map", "", false},
		{"hosts.map", "", false},
		{"file:hosts.map", "", false}, // wrong kind
		{"config:haproxy.cfg", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		f, ok := b.Get(tt.target)
		if ok != tt.ok || f.Content.String() != tt.content {
			t.Errorf("Get(%q) = %q, %v; want %q, %v", tt.target, f.Content.String(), ok, tt.content, tt.ok)
		}
		if ok && f.Target() != tt.target {
			t.Errorf("Get(%q) returned %q", tt.target, f.Target())
		}
	}
	if c := b.Config(); c.Content.String() != "global\n" {
		t.Errorf("Config() = %q", c.Content.String())
	}
	if c := New(nil).Config(); c.Content.String() != "" || c.Kind != "" {
		t.Errorf("Config() of an empty bundle = %+v", c)
	}
}

var prod = Layout{
	ConfigFile:        "/etc/haproxy/haproxy.cfg",
	MapsDir:           "/etc/haproxy/maps",
	SSLCertsDir:       "/etc/haproxy/ssl",
	GeneralStorageDir: "/etc/haproxy/general",
}

func TestLayoutPath(t *testing.T) {
	tests := []struct {
		f    File
		want string
	}{
		{File{Kind: KindConfig, Name: "ignored"}, "/etc/haproxy/haproxy.cfg"},
		{File{Kind: KindMap, Name: "hosts.map"}, "/etc/haproxy/maps/hosts.map"},
		{File{Kind: KindFile, Name: "503.http"}, "/etc/haproxy/general/503.http"},
		{File{Kind: KindCert, Name: "a.pem"}, "/etc/haproxy/ssl/a.pem"},
		{File{Kind: KindCrtList, Name: "list.txt"}, "/etc/haproxy/ssl/list.txt"},
		{File{Kind: "other", Name: "x"}, "/etc/haproxy/general/x"},
	}
	for _, tt := range tests {
		if got := prod.Path(tt.f); got != tt.want {
			t.Errorf("Path(%s) = %q, want %q", tt.f.Target(), got, tt.want)
		}
	}
}

func TestRebase(t *testing.T) {
	got := prod.Rebase("/tmp/x")
	want := Layout{
		ConfigFile:        "/tmp/x/etc/haproxy/haproxy.cfg",
		MapsDir:           "/tmp/x/etc/haproxy/maps",
		SSLCertsDir:       "/tmp/x/etc/haproxy/ssl",
		GeneralStorageDir: "/tmp/x/etc/haproxy/general",
	}
	if got != want {
		t.Errorf("Rebase = %+v, want %+v", got, want)
	}
	if prod.ConfigFile != "/etc/haproxy/haproxy.cfg" {
		t.Error("Rebase modified its receiver")
	}
	if got := prod.Rebase("/tmp/x/").MapsDir; got != "/tmp/x/etc/haproxy/maps" {
		t.Errorf("Rebase with a trailing slash: MapsDir = %q", got)
	}
}

func TestRelocate(t *testing.T) {
	to := prod.Rebase("/tmp/v")
	cfg := strings.Join([]string{
		"global",
		"  # main file /etc/haproxy/haproxy.cfg",
		"frontend f",
		"  bind :443 ssl crt-list /etc/haproxy/ssl/list.txt",
		"  bind :8443 ssl crt /etc/haproxy/ssl/a.pem",
		"  use_backend %[req.hdr(host),map(/etc/haproxy/maps/hosts.map)]",
		"  errorfile 503 /etc/haproxy/general/503.http",
		"  acl x path_beg -f /etc/haproxy/mapsX/other.map", // only shares a prefix
		"  acl y path_beg -f /etc/haproxy/maps.d/other.map",
		"  http-request return file /etc/haproxy/generalfoo",
		"  bind :80 ssl crt /etc/haproxy/ssl", // directory without slash: untouched
		"  log /etc/haproxy/other/file",
		"",
	}, "\n")
	wantCfg := strings.Join([]string{
		"global",
		"  # main file /tmp/v/etc/haproxy/haproxy.cfg",
		"frontend f",
		"  bind :443 ssl crt-list /tmp/v/etc/haproxy/ssl/list.txt",
		"  bind :8443 ssl crt /tmp/v/etc/haproxy/ssl/a.pem",
		"  use_backend %[req.hdr(host),map(/tmp/v/etc/haproxy/maps/hosts.map)]",
		"  errorfile 503 /tmp/v/etc/haproxy/general/503.http",
		"  acl x path_beg -f /etc/haproxy/mapsX/other.map",
		"  acl y path_beg -f /etc/haproxy/maps.d/other.map",
		"  http-request return file /etc/haproxy/generalfoo",
		"  bind :80 ssl crt /etc/haproxy/ssl",
		"  log /etc/haproxy/other/file",
		"",
	}, "\n")
	in := New([]File{
		{Kind: KindConfig, Name: "haproxy.cfg", Content: TextOf(cfg)},
		{Kind: KindCrtList, Name: "list.txt", Content: TextOf("/etc/haproxy/ssl/a.pem [alpn h2] a.example.com\n/etc/haproxy/sslX/b.pem\n")},
		{Kind: KindMap, Name: "hosts.map", Content: TextOf("/etc/haproxy/maps/ is-a-key\n")},
		{Kind: KindCert, Name: "a.pem", Content: TextOf("-----BEGIN CERTIFICATE-----\n")},
	})
	inHash := in.Hash
	out := in.Relocate(prod, to)

	if got := out.Config().Content.String(); got != wantCfg {
		t.Errorf("relocated haproxy.cfg:\n%s\nwant:\n%s", got, wantCfg)
	}
	if got, _ := out.Get("crtlist:list.txt"); got.Content.String() != "/tmp/v/etc/haproxy/ssl/a.pem [alpn h2] a.example.com\n/etc/haproxy/sslX/b.pem\n" {
		t.Errorf("relocated crt-list = %q", got.Content.String())
	}
	if got, _ := out.Get("map:hosts.map"); got.Content.String() != "/tmp/v/etc/haproxy/maps/ is-a-key\n" {
		t.Errorf("relocated map = %q", got.Content.String())
	}
	if got, _ := out.Get("cert:a.pem"); got.Content.String() != "-----BEGIN CERTIFICATE-----\n" {
		t.Errorf("cert changed: %q", got.Content.String())
	}
	// hashes follow the new content; the input bundle is unchanged
	for _, f := range out.Files {
		if f.Hash != HashContent(f.Content.String()) {
			t.Errorf("%s: stale hash after Relocate", f.Target())
		}
	}
	if out.Hash == inHash {
		t.Error("bundle hash unchanged after content was rewritten")
	}
	if in.Hash != inHash || in.Config().Content.String() != cfg {
		t.Error("Relocate modified its receiver")
	}
	if !slices.Equal(targets(out), targets(in)) {
		t.Errorf("Relocate changed the file set: %v vs %v", targets(out), targets(in))
	}

	// Relocating onto a layout whose paths contain the old ones is a single pass.
	if got := out.Relocate(to, prod).Config().Content.String(); got != cfg {
		t.Errorf("relocating back did not round-trip:\n%s", got)
	}
	if got := in.Relocate(prod, prod).Hash; got != inHash {
		t.Error("relocating onto the same layout changed the bundle")
	}
}

func TestWriteTo(t *testing.T) {
	root := t.TempDir()
	l := prod.Rebase(root)
	b := New(files())
	if err := b.WriteTo(l); err != nil {
		t.Fatal(err)
	}
	for _, f := range b.Files {
		p := l.Path(f)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v", f.Target(), err)
			continue
		}
		if string(data) != f.Content.String() {
			t.Errorf("%s content = %q, want %q", p, data, f.Content.String())
		}
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Errorf("%s written outside the root", p)
		}
		if runtime.GOOS == "windows" {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		perm := st.Mode().Perm()
		if f.Kind == KindCert {
			if perm != 0o600 {
				t.Errorf("%s mode = %o, want 600", f.Target(), perm)
			}
		} else if perm&^0o644 != 0 || perm&0o600 != 0o600 {
			t.Errorf("%s mode = %o, want 644 (minus umask)", f.Target(), perm)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "etc/haproxy/haproxy.cfg")); err != nil {
		t.Errorf("haproxy.cfg not at its layout path: %v", err)
	}

	// A second write replaces content.
	b2 := New([]File{{Kind: KindConfig, Name: "haproxy.cfg", Content: TextOf("new")}})
	if err := b2.WriteTo(l); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(l.ConfigFile); string(data) != "new" {
		t.Errorf("rewritten haproxy.cfg = %q", data)
	}
}

func TestWriteToError(t *testing.T) {
	root := t.TempDir()
	// A regular file where the maps directory should be.
	blocker := filepath.Join(root, "maps")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := Layout{ConfigFile: filepath.Join(root, "haproxy.cfg"), MapsDir: blocker, SSLCertsDir: root, GeneralStorageDir: root}
	err := New([]File{{Kind: KindMap, Name: "hosts.map", Content: TextOf("x")}}).WriteTo(l)
	if err == nil || !strings.Contains(err.Error(), "map:hosts.map") {
		t.Errorf("WriteTo error = %v, want one naming map:hosts.map", err)
	}
}

// referenceHash is HashContent as the agent protocol states it (chunks.go), written
// plainly: a small content's SHA-256; a large one's chunks cut byte by byte.
func referenceHash(s string) string {
	if len(s) < hashCacheMin {
		sum := sha256.Sum256([]byte(s))
		return hex.EncodeToString(sum[:])
	}
	mix := func(w string) bool {
		var a, b uint64
		for i := 7; i >= 0; i-- {
			a = a<<8 | uint64(w[i])
			b = b<<8 | uint64(w[8+i])
		}
		h := a*0x9e3779b97f4a7c15 ^ b*0xc2b2ae3d27d4eb4f
		h ^= h >> 32
		h *= 0xd6e8feb86659fd93
		return h>>(64-chunkBits) == 0
	}
	list := []byte(chunkedPrefix)
	for start := 0; start < len(s); {
		end := start
		for end < len(s) && end-start < chunkMax {
			end++
			if end-start >= chunkMin && s[end-1] == '\n' && mix(s[end-16:end]) {
				break
			}
		}
		sum := sha256.Sum256([]byte(s[start:end]))
		list = append(list, sum[:]...)
		start = end
	}
	sum := sha256.Sum256(list)
	return hex.EncodeToString(sum[:])
}

// TestHashContentOfLargeContents: a large content's hash is its chunked hash (with
// a fixed value: both sides of the agent protocol, of any version that speaks it,
// must agree), whether its chunks end at line ends or at chunkMax.
func TestHashContentOfLargeContents(t *testing.T) {
	var b strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&b, "    server srv_10_1_%d_%d 10.1.%d.%d:8080 check\n", i/250, i%250, i/250, i%250)
	}
	cfg := b.String()
	noLines := strings.Repeat("x", 3*chunkMax+5)
	for _, s := range []string{cfg, noLines, cfg[:hashCacheMin], cfg[:hashCacheMin-1]} {
		if got, want := HashContent(s), referenceHash(s); got != want {
			t.Fatalf("HashContent of %d bytes = %s, want %s", len(s), got, want)
		}
	}
	if got := HashContent(cfg); got != "548af8e594908c8d639989113a3f4c61db146665966f68a2e0b45ad12700b192" {
		t.Errorf("HashContent(cfg) = %s: the agent protocol's hash changed", got)
	}
	chunks, atLines := chunkOn(TextOf(cfg), 0, nil), 0
	for i, c := range chunks[:len(chunks)-1] {
		if start := c.end - chunkMax; i == 0 && start < 0 || i > 0 && chunks[i-1].end > start {
			atLines++
		}
	}
	if atLines < len(chunks)/2 || len(chunks) > len(cfg)/chunkMin {
		t.Errorf("%d chunks for %d bytes, %d of them cut at a line end", len(chunks), len(cfg), atLines)
	}
}

// TestHashContentRemembersOnlyTheSameBytes: large contents built one after another
// (the collector frees each, so addresses are reused) and substrings of a hashed
// content each hash to their own hash, whatever HashContent remembered.
func TestHashContentRemembersOnlyTheSameBytes(t *testing.T) {
	base := strings.Repeat("host.example.com backend\n", hashCacheMin/8)
	for i := range 300 {
		b := []byte(base)
		b[i%len(b)] = byte('a' + i%26)
		s := string(b)
		for _, c := range []string{s, s, s[:len(s)-1], s[1:]} {
			if got := HashContent(c); got != referenceHash(c) {
				t.Fatalf("step %d: remembered hash %s, want %s", i, got, referenceHash(c))
			}
		}
		if i%50 == 0 {
			runtime.GC()
		}
	}
}

// TestHashEditedIsTheHash: HashEdited of random edits of a large content (lines
// inserted, deleted or changed anywhere, in the first chunk too; the base hashed
// or not, remembered or collected) is the content's hash, and an edit in one
// place hashes only the chunks around it again.
func TestHashEditedIsTheHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var lines []string
	for i := range 40000 {
		lines = append(lines, fmt.Sprintf("@gw/h%d.example.com/p%d be%d\n", i, i, rng.IntN(50)))
	}
	base := strings.Join(lines, "")
	HashContent(base)
	local := 0
	for i := range 400 {
		next := slices.Clone(lines)
		edits := 1 + rng.IntN(3)
		for range edits {
			at := rng.IntN(len(next))
			if i%10 == 0 {
				at = rng.IntN(20) // in the first chunk
			}
			switch rng.IntN(3) {
			case 0:
				next = slices.Insert(next, at, fmt.Sprintf("new%d be\n", i))
			case 1:
				next = slices.Delete(next, at, at+1)
			default:
				next[at] = "changed be\n"
			}
		}
		s := strings.Join(next, "")
		if i%7 == 0 {
			s = s[:rng.IntN(len(s))] // shorter, maybe below the size that is remembered
		}
		if got := HashEdited(TextOf(base), TextOf(s)); got != referenceHash(s) {
			t.Fatalf("step %d: %s, want %s", i, got, referenceHash(s))
		}
		if e, ok := hashes.get(idOf(s)); ok && edits == 1 && i%7 != 0 {
			b, _ := hashes.get(idOf(base))
			if b != nil && len(e.chunks)-sharedSums(b.chunks, e.chunks) <= 3 {
				local++
			}
		}
		if i%3 == 0 && len(s) >= hashCacheMin {
			base, lines = s, next // edit the edit
		}
		if i%50 == 0 {
			runtime.GC()
		}
	}
	if local < 100 {
		t.Fatalf("only %d single edits kept all but three chunks of their base", local)
	}
}

// sharedSums counts the chunks of b that a has too.
func sharedSums(a, b []chunkSum) int {
	have := map[[32]byte]bool{}
	for _, c := range a {
		have[c.sum] = true
	}
	n := 0
	for _, c := range b {
		if have[c.sum] {
			n++
		}
	}
	return n
}
