// Command webhookcert writes a CA and a serving certificate for the admission
// webhook (ca.crt, tls.crt, tls.key) into a directory; scripts/run-local.sh uses it
// for `make run`. Hosts are DNS names or IP addresses.
//
//	go run ./tools/webhookcert -dir DIR haptic-webhook.haptic.svc
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/haproxy-haptic/haptic/internal/webhook"
)

func main() {
	dir := flag.String("dir", ".", "where to write ca.crt, tls.crt and tls.key")
	validFor := flag.Duration("valid-for", 365*24*time.Hour, "validity")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: webhookcert -dir DIR HOST...")
		os.Exit(2)
	}
	c, err := webhook.NewCertificate(flag.Args(), *validFor)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for name, data := range map[string][]byte{"ca.crt": c.CA, "tls.crt": c.Cert, "tls.key": c.Key} {
		if err := os.WriteFile(filepath.Join(*dir, name), data, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
