package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// TestGatewayStatusOwnFleet creates Gateways while other fleets exist (the
// podSelector's pods, which serve Ingresses, and other Gateways' pods) and reads
// every Gateway's status every 20 ms from before it is created: its status.addresses
// only ever name pods of its own fleet (or none), and whenever it (or a listener)
// is Programmed, one of those pods answers on the Gateway's listener port — a port
// no other fleet listens on, so the answer comes from the Gateway's configuration.
// The same holds for a Gateway deleted and created again under its name with
// another port.
func TestGatewayStatusOwnFleet(t *testing.T) {
	e := setupLibraries(t, 1, "", "base", "ingress", "gateway") // deploy/local provisions per Gateway
	gw, err := gwclient.NewForConfig(e.c.REST)
	if err != nil {
		t.Fatal(err)
	}
	class := e.ns
	if _, err := gw.GatewayV1().GatewayClasses().Create(e.ctx, &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: class},
		Spec:       gwv1.GatewayClassSpec{ControllerName: gwv1.GatewayController(e.controllerName)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = gw.GatewayV1().GatewayClasses().Delete(context.Background(), class, metav1.DeleteOptions{})
	})
	e.eventually("the podSelector's pod", 60*time.Second, func() (bool, string) {
		return len(e.haproxyPods()) == 1, fmt.Sprint(e.haproxyPods())
	})

	w := &statusWatch{e: e, gw: gw, owners: map[string]map[string]bool{}, checked: map[string]bool{},
		created: map[string]time.Time{}, firstAddr: map[string]time.Duration{}, programmedAt: map[string]time.Duration{}}
	ctx, stop := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.run(ctx) }()
	t.Cleanup(func() { stop(); <-done })

	create := func(name string, port int32) {
		t.Helper()
		w.mu.Lock()
		w.created[name] = time.Now()
		w.mu.Unlock()
		if _, err := gw.GatewayV1().Gateways(e.ns).Create(e.ctx, &gwv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: gwv1.GatewaySpec{GatewayClassName: gwv1.ObjectName(class), Listeners: []gwv1.Listener{{
				Name: "http", Port: gwv1.PortNumber(port), Protocol: gwv1.HTTPProtocolType,
			}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	programmed := func(names ...string) {
		t.Helper()
		for _, name := range names {
			e.eventually(name+" Programmed (checked by the 20 ms watch)", 180*time.Second, func() (bool, string) {
				if v := w.violations(); v != "" {
					t.Fatalf("status invariant broken:\n%s", v)
				}
				return w.verified(name), w.last(name)
			})
		}
	}

	// A first Gateway next to the podSelector's fleet.
	create("gw-1", 9001)
	programmed("gw-1")
	// Two at once, while the podSelector's and gw-1's fleets serve.
	create("gw-2", 9002)
	create("gw-3", 9003)
	programmed("gw-2", "gw-3")
	// gw-3 again under the same name, on another port: its old pods, its old record
	// of what was live, must not make the new object Programmed.
	if err := gw.GatewayV1().Gateways(e.ns).Delete(e.ctx, "gw-3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.eventually("gw-3 deleted", 30*time.Second, func() (bool, string) {
		_, err := gw.GatewayV1().Gateways(e.ns).Get(e.ctx, "gw-3", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	create("gw-3", 9004)
	programmed("gw-3")
	// A while longer: nothing changes back.
	time.Sleep(3 * time.Second)
	if v := w.violations(); v != "" {
		t.Fatalf("status invariant broken:\n%s", v)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Logf("%d status reads (every %s); from creation: first address %v, Programmed (verified) %v",
		w.reads, (w.lastRead.Sub(w.firstRead) / time.Duration(max(w.reads-1, 1))).Round(time.Millisecond), w.firstAddr, w.programmedAt)
}

// statusWatch reads the test namespace's Gateways every 20 ms and checks each
// Gateway's status against the pods (an informer's, a fresh list when it lags).
type statusWatch struct {
	e  *env
	gw gwclient.Interface

	mu           sync.Mutex
	reads        int
	firstRead    time.Time
	lastRead     time.Time
	owners       map[string]map[string]bool // pod IP → fleets whose pod had it ("podSelector", "ns/gateway", "other")
	checked      map[string]bool            // uid/generation whose Programmed was verified
	created      map[string]time.Time       // Gateway → when the test created it (last time)
	firstAddr    map[string]time.Duration   // Gateway name/uid → first address, after creation
	programmedAt map[string]time.Duration   // Gateway name/uid → Programmed (verified), after creation
	verifiedGen  map[string]string          // Gateway → uid/generation last verified
	lastStatus   map[string]string
	broken       []string
}

func (w *statusWatch) run(ctx context.Context) {
	client := w.e.c.HTTPClient(2 * time.Second)
	// Pods through an informer (one Gateway list per read keeps the 20 ms pace); an
	// address it does not place is checked against a fresh list.
	factory := informers.NewSharedInformerFactoryWithOptions(w.e.c.Client, 0, informers.WithNamespace(w.e.ns))
	pods := factory.Core().V1().Pods()
	inf := pods.Informer()
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.once(ctx, client, pods.Lister())
	}
}

// podFleets returns each pod IP's fleet now and records every fleet an IP ever had.
func (w *statusWatch) podFleets(pods []*corev1.Pod) map[string]string {
	current := map[string]string{}
	for _, p := range pods {
		if p.Status.PodIP == "" {
			continue
		}
		current[p.Status.PodIP] = fleetOf(p)
		if w.owners[p.Status.PodIP] == nil {
			w.owners[p.Status.PodIP] = map[string]bool{}
		}
		w.owners[p.Status.PodIP][fleetOf(p)] = true
	}
	return current
}

// ownAddress reports whether ip is (now, or — gone since — only ever was) the
// address of a pod of the Gateway named name.
func (w *statusWatch) ownAddress(current map[string]string, name, ip string) bool {
	if owner, ok := current[ip]; ok {
		return owner == name
	}
	return len(w.owners[ip]) == 1 && w.owners[ip][name]
}

func (w *statusWatch) once(ctx context.Context, client *http.Client, lister corev1listers.PodLister) {
	gws, err := w.gw.GatewayV1().Gateways(w.e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	cached, err := lister.List(labels.Everything())
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads++
	if w.firstRead.IsZero() {
		w.firstRead = time.Now()
	}
	w.lastRead = time.Now()
	current := w.podFleets(cached)
	fresh := false
	for _, g := range gws.Items {
		for _, a := range g.Status.Addresses {
			if !fresh && !w.ownAddress(current, g.Namespace+"/"+g.Name, a.Value) {
				// The informer may lag the status: ask the API server (the pods after
				// the Gateways, so a pod the status names is there, or was).
				list, err := w.e.c.Client.CoreV1().Pods(w.e.ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					return
				}
				var ps []*corev1.Pod
				for i := range list.Items {
					ps = append(ps, &list.Items[i])
				}
				current, fresh = w.podFleets(ps), true
			}
		}
	}
	if w.verifiedGen == nil {
		w.verifiedGen, w.lastStatus = map[string]string{}, map[string]string{}
	}
	for i := range gws.Items {
		g := &gws.Items[i]
		name := g.Namespace + "/" + g.Name
		since := time.Since(w.created[g.Name]).Round(time.Millisecond)
		var addrs []string
		for _, a := range g.Status.Addresses {
			addrs = append(addrs, a.Value)
			if !w.ownAddress(current, name, a.Value) {
				w.broken = append(w.broken, fmt.Sprintf("%s (uid %s) %s after creation: address %s belongs to %q (ever: %v), not to its own pods",
					name, g.UID, since, a.Value, current[a.Value], keysOf(w.owners[a.Value])))
			}
		}
		id := g.Name + "/" + string(g.UID)[:8]
		if _, ok := w.firstAddr[id]; !ok && len(addrs) > 0 {
			w.firstAddr[id] = since
		}
		prog := programmedNow(g)
		w.lastStatus[g.Name] = fmt.Sprintf("addresses %v programmed %v conditions %v", addrs, prog, g.Status.Conditions)
		key := fmt.Sprintf("%s/%d", g.UID, g.Generation)
		if !prog || w.checked[key] {
			continue
		}
		w.checked[key] = true
		port := strconv.Itoa(int(g.Spec.Listeners[0].Port))
		answers := ""
		for _, a := range addrs {
			if code, err := answer(ctx, client, a, port); err == nil {
				answers = fmt.Sprintf("%s:%s answered %d", a, port, code)
				break
			} else {
				answers += fmt.Sprintf("%s:%s: %v; ", a, port, err)
			}
		}
		if len(addrs) == 0 || !strings.Contains(answers, "answered") {
			w.broken = append(w.broken, fmt.Sprintf("%s (uid %s, generation %d) %s after creation: Programmed while none of its pods serves its listener (addresses %v: %s)%s",
				name, g.UID, g.Generation, since, addrs, answers, w.diagnose(ctx, client, addrs, port)))
			continue
		}
		w.verifiedGen[g.Name] = key
		w.programmedAt[id] = since
	}
}

// diagnose says, for a Programmed Gateway none of whose pods answered, what each
// pod's agent runs (hash, last apply, whether its config binds the port) and
// whether the port answers a moment later.
func (w *statusWatch) diagnose(ctx context.Context, client *http.Client, addrs []string, port string) string {
	var b strings.Builder
	get := func(ip, path string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(ip, "5555")+path, nil)
		if err != nil {
			return "", err
		}
		req.SetBasicAuth(agentUser, agentPass)
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return string(data), err
	}
	for _, a := range addrs {
		st, err := get(a, "/v1/state")
		if len(st) > 600 {
			st = st[:600] + "..."
		}
		fmt.Fprintf(&b, "\n  agent %s state: %s %v", a, st, err)
		cfg, err := get(a, "/v1/config")
		fmt.Fprintf(&b, "\n  agent %s config binds :%s: %v (%v)", a, port, strings.Contains(cfg, ":"+port+"\""), err)
	}
	for _, d := range []time.Duration{300 * time.Millisecond, time.Second, 3 * time.Second} {
		time.Sleep(d)
		for _, a := range addrs {
			code, err := answer(ctx, client, a, port)
			fmt.Fprintf(&b, "\n  +%v %s:%s: %d %v", d, a, port, code, err)
		}
	}
	return b.String()
}

// verified reports whether the Gateway's current object was seen Programmed and
// checked.
func (w *statusWatch) verified(name string) bool {
	g, err := w.gw.GatewayV1().Gateways(w.e.ns).Get(w.e.ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.verifiedGen[name] == fmt.Sprintf("%s/%d", g.UID, g.Generation)
}

func (w *statusWatch) last(name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastStatus[name]
}

func (w *statusWatch) violations() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.broken, "\n")
}

// fleetOf names the fleet a pod belongs to: its Gateway (per-Gateway pods), the
// podSelector's, or none (backends).
func fleetOf(p *corev1.Pod) string {
	if gw := p.Annotations["haproxy-haptic.org/gateway"]; gw != "" {
		return gw
	}
	if p.Labels["app.kubernetes.io/component"] == "loadbalancer" {
		return "podSelector"
	}
	return "other"
}

// programmedNow reports whether the Gateway or one of its listeners says
// Programmed=True for its current generation.
func programmedNow(g *gwv1.Gateway) bool {
	for _, c := range g.Status.Conditions {
		if c.Type == string(gwv1.GatewayConditionProgrammed) && c.Status == metav1.ConditionTrue && c.ObservedGeneration == g.Generation {
			return true
		}
	}
	for _, l := range g.Status.Listeners {
		for _, c := range l.Conditions {
			if c.Type == string(gwv1.ListenerConditionProgrammed) && c.Status == metav1.ConditionTrue && c.ObservedGeneration == g.Generation {
				return true
			}
		}
	}
	return false
}

// answer sends one request to ip:port; any HTTP answer means something listens.
func answer(ctx context.Context, client *http.Client, ip, port string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(ip, port)+"/", nil)
	if err != nil {
		return 0, err
	}
	req.Host = "status-watch.example.com"
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
