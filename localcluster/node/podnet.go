package node

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// podNetwork gives each pod its own network namespace, so that every pod can
// bind the same wildcard ports (echo-basic listens on :3000 and :3001). The pod
// namespace is joined to the cluster's namespace by a veth pair, as a CNI
// point-to-point plugin does:
//
//	cluster netns: hvXXXX (up), route <podIP>/32 dev hvXXXX
//	pod netns:     lo up, eth0 with <podIP>/32, route <gateway> dev eth0,
//	               default via <gateway> (the API server address, which the
//	               cluster side answers ARP for because it is a local address)
//
// The node runs inside the cluster's namespace, so host-side commands need no -n.
type podNetwork struct {
	prefix  string // pod netns names: <cluster netns>-p-<x>-<y>
	gateway string

	mu   sync.Mutex
	used map[string]bool
	next netip.Addr
}

var podPrefix = netip.MustParsePrefix("10.244.0.0/16")

var firstPodIP = netip.MustParseAddr("10.244.0.2")

func newPodNetwork(clusterNetns, gateway string) *podNetwork {
	return &podNetwork{prefix: clusterNetns + "-p-", gateway: gateway, used: map[string]bool{}, next: firstPodIP}
}

// nsName returns the pod namespace name for a pod IP.
func (p *podNetwork) nsName(ip string) string {
	a := netip.MustParseAddr(ip).As4()
	return fmt.Sprintf("%s%d-%d", p.prefix, a[2], a[3])
}

func hostVeth(ip string) string {
	a := netip.MustParseAddr(ip).As4()
	return fmt.Sprintf("hv%02x%02x", a[2], a[3])
}

// allocate picks a free address (skipping .0, .1 and .255 of each /24) and
// creates the pod's namespace and veth pair.
func (p *podNetwork) allocate() (ip, netns string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range 1 << 16 {
		candidate := p.next
		p.next = p.next.Next()
		if !podPrefix.Contains(p.next) {
			p.next = firstPodIP
		}
		last := candidate.As4()[3]
		if last == 0 || last == 1 || last == 255 || p.used[candidate.String()] {
			continue
		}
		ip := candidate.String()
		if err := p.create(ip); err != nil {
			_ = p.destroy(ip)
			return "", "", err
		}
		p.used[ip] = true
		return ip, p.nsName(ip), nil
	}
	return "", "", fmt.Errorf("pod address range %s exhausted", podPrefix)
}

func (p *podNetwork) create(ip string) error {
	ns, veth := p.nsName(ip), hostVeth(ip)
	if err := ipCommand("netns", "add", ns); err != nil {
		return err
	}
	host := []string{
		fmt.Sprintf("link add %s type veth peer name eth0 netns %s", veth, ns),
		fmt.Sprintf("link set %s up", veth),
		fmt.Sprintf("route add %s/32 dev %s", ip, veth),
	}
	if err := ipBatch("", host); err != nil {
		return err
	}
	pod := []string{
		"link set lo up",
		"link set eth0 up",
		fmt.Sprintf("addr add %s/32 dev eth0", ip),
		fmt.Sprintf("route add %s dev eth0 scope link", p.gateway),
		fmt.Sprintf("route add default via %s dev eth0", p.gateway),
	}
	return ipBatch(ns, pod)
}

// release removes the pod's namespace; its veth pair and route go with it.
func (p *podNetwork) release(ip string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.used, ip)
	return p.destroy(ip)
}

func (p *podNetwork) destroy(ip string) error {
	ns := p.nsName(ip)
	if _, err := os.Stat(filepath.Join("/run/netns", ns)); os.IsNotExist(err) {
		return nil
	}
	if err := ipCommand("netns", "del", ns); err != nil {
		return fmt.Errorf("remove pod network: %w", err)
	}
	return nil
}

// clear removes pod namespaces an earlier node left behind.
func (p *podNetwork) clear() error {
	entries, err := os.ReadDir("/run/netns")
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("list netns: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), p.prefix) {
			if err := ipCommand("netns", "del", e.Name()); err != nil {
				return err
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

// ipBatch runs several ip commands in one process, inside netns when set.
func ipBatch(netns string, lines []string) error {
	args := []string{"-batch", "-"}
	if netns != "" {
		args = append([]string{"-n", netns}, args...)
	}
	cmd := exec.Command("ip", args...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
