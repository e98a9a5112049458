package node

import (
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
)

// ipam hands out pod addresses from 10.244.0.0/16 and adds each as a /32 on
// the namespace's lo (the node runs inside the cluster's network namespace).
type ipam struct {
	mu   sync.Mutex
	used map[string]bool
	next netip.Addr
}

var podPrefix = netip.MustParsePrefix("10.244.0.0/16")

func newIPAM() *ipam {
	return &ipam{used: map[string]bool{}, next: netip.MustParseAddr("10.244.0.2")}
}

// allocate picks the next free address (skipping .0, .1 and .255 of each /24)
// and adds it to lo.
func (a *ipam) allocate() (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for range 1 << 16 {
		candidate := a.next
		a.next = a.next.Next()
		if !podPrefix.Contains(a.next) {
			a.next = netip.MustParseAddr("10.244.0.2")
		}
		last := candidate.As4()[3]
		if last == 0 || last == 1 || last == 255 || a.used[candidate.String()] {
			continue
		}
		ip := candidate.String()
		if err := ipCommand("addr", "add", ip+"/32", "dev", "lo"); err != nil {
			return "", fmt.Errorf("add pod address: %w", err)
		}
		a.used[ip] = true
		return ip, nil
	}
	return "", fmt.Errorf("pod address range %s exhausted", podPrefix)
}

func (a *ipam) release(ip string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.used, ip)
	if err := ipCommand("addr", "del", ip+"/32", "dev", "lo"); err != nil {
		return fmt.Errorf("remove pod address: %w", err)
	}
	return nil
}

// clear removes pod addresses an earlier node left on lo.
func (a *ipam) clear() error {
	out, err := exec.Command("ip", "-o", "-4", "addr", "show", "dev", "lo").Output()
	if err != nil {
		return fmt.Errorf("list lo addresses: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		for i, f := range fields {
			if f != "inet" || i+1 >= len(fields) {
				continue
			}
			prefix, err := netip.ParsePrefix(fields[i+1])
			if err == nil && podPrefix.Contains(prefix.Addr()) {
				if err := ipCommand("addr", "del", prefix.String(), "dev", "lo"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func ipCommand(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
