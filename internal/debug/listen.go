package debug

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// LoopbackAddr is the listen address for a --debug-port style flag: 127.0.0.1:<port>.
func LoopbackAddr(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// ResolveLoopback checks that the host of the listen address addr ("host:port") is a
// loopback address, resolving a host name first, and returns the address to listen on
// with the host replaced by the IP literal that was checked. An empty host, an
// unspecified address (0.0.0.0, ::) and a name resolving to any non-loopback address
// are refused.
func ResolveLoopback(ctx context.Context, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("debug listen address %q: %w", addr, err)
	}
	if host == "" {
		return "", fmt.Errorf("debug listen address %q: no host means every interface; the debug server listens on loopback only", addr)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if !isLoopback(ip) {
			return "", fmt.Errorf("debug listen address %q: %s is not a loopback address; the debug server listens on loopback only", addr, ip)
		}
		return addr, nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return "", fmt.Errorf("debug listen address %q: %w", addr, err)
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("debug listen address %q: %s resolves to no address", addr, host)
	}
	chosen := ips[0]
	for _, ip := range ips {
		if !isLoopback(ip) {
			return "", fmt.Errorf("debug listen address %q: %s resolves to %s, which is not loopback; the debug server listens on loopback only", addr, host, ip)
		}
		if ip.Unmap().Is4() && !chosen.Unmap().Is4() {
			chosen = ip // prefer 127.x when a name resolves to both families
		}
	}
	return net.JoinHostPort(chosen.Unmap().WithZone("").String(), port), nil
}

func isLoopback(ip netip.Addr) bool { return ip.Unmap().IsLoopback() }

// Listen opens a TCP listener on addr after ResolveLoopback has accepted it.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	resolved, err := ResolveLoopback(ctx, addr)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", resolved)
	if err != nil {
		return nil, fmt.Errorf("debug server: %w", err)
	}
	return ln, nil
}
