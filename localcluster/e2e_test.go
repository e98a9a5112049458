package localcluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/haproxy-haptic/haptic/localcluster/clustertest"
	"github.com/haproxy-haptic/haptic/localcluster/node"
)

func TestMain(m *testing.M) { os.Exit(clustertest.Main(m)) }

// An upstream image reference: only its name (echo-basic) selects the local binary.
const echoImage = "gcr.io/k8s-staging-gateway-api/echo-basic:v20240412-v1.0.0-394-g40c666fd"

func echoDeployment(replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "echo"}
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr(int64(5)),
					Containers: []corev1.Container{{
						Name:  "echo",
						Image: echoImage,
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 3000}},
						Env: []corev1.EnvVar{
							{Name: "POD_NAME", ValueFrom: field("metadata.name")},
							{Name: "NAMESPACE", ValueFrom: field("metadata.namespace")},
							{Name: "POD_IP", ValueFrom: field("status.podIP")},
						},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromString("http")}},
							PeriodSeconds: 1,
						},
					}},
				},
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// echoResponse is the part of echo-basic's JSON answer that names the pod.
type echoResponse struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
}

// TestEchoBasicDeployment is the bar: a Deployment of echo-basic runs
// as processes with their own IPs, listed by the real EndpointSlice controller,
// answering from inside the cluster's namespace, scaling up and down, and
// leaving no process behind when deleted.
func TestEchoBasicDeployment(t *testing.T) {
	t.Parallel() // own namespace; process counts are per namespace
	c := clustertest.Start(t)
	ns := c.NewNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()

	created := time.Now()
	if _, err := ns.Client.AppsV1().Deployments(ns.Name).Create(ctx, echoDeployment(2), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "echo"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
	if _, err := ns.Client.CoreV1().Services(ns.Name).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service: %v", err)
	}

	pods := waitReadyPods(t, ns, "app=echo", 2, 60*time.Second)
	t.Logf("2 replicas Running and Ready %.2fs after the Deployment was created", time.Since(created).Seconds())
	assertPodIPs(t, pods)

	waitFor(t, 30*time.Second, "EndpointSlice listing both pods", func() (bool, string, error) {
		got := readyEndpoints(t, ns, "echo")
		return slices.Equal(got, podIPs(pods)), fmt.Sprint(got), nil
	})

	client := c.HTTPClient(5 * time.Second)
	for _, p := range pods {
		got := getEcho(t, client, p.Status.PodIP)
		if got.Pod != p.Name || got.Namespace != ns.Name {
			t.Errorf("GET %s answered pod %q namespace %q, want %q %q", p.Status.PodIP, got.Pod, got.Namespace, p.Name, ns.Name)
		}
		if n := processCount(t, ns.Name+"/"+p.Name); n != 1 {
			t.Errorf("pod %s has %d processes, want 1", p.Name, n)
		}
	}

	assertAPIServerReachesPods(t, ns, pods)
	assertPodToPod(t, ns.Name+"/"+pods[0].Name, pods[1].Status.PodIP, pods[1].Name)
	assertLoopbackForward(t, c, pods[0].Status.PodIP, pods[0].Name)

	scale(t, ns, 4)
	pods = waitReadyPods(t, ns, "app=echo", 4, 60*time.Second)
	assertPodIPs(t, pods)
	usedIPs := podIPs(pods)
	for _, ip := range usedIPs {
		if !fileExists(podNetnsPath(c.Config.Netns, ip)) {
			t.Errorf("no network namespace %s for the running pod with %s", podNetnsPath(c.Config.Netns, ip), ip)
		}
	}
	waitProcessCount(t, ns.Name+"/", 4, 10*time.Second)
	for _, p := range pods {
		if got := getEcho(t, client, p.Status.PodIP); got.Pod != p.Name {
			t.Errorf("GET %s answered pod %q, want %q", p.Status.PodIP, got.Pod, p.Name)
		}
	}

	scale(t, ns, 1)
	pods = waitReadyPods(t, ns, "app=echo", 1, 60*time.Second)
	waitProcessCount(t, ns.Name+"/", 1, 10*time.Second)
	if n := processCount(t, ns.Name+"/"+pods[0].Name); n != 1 {
		t.Errorf("remaining pod %s has %d processes, want 1", pods[0].Name, n)
	}
	waitFor(t, 30*time.Second, "EndpointSlice listing the remaining pod", func() (bool, string, error) {
		got := readyEndpoints(t, ns, "echo")
		return slices.Equal(got, podIPs(pods)), fmt.Sprint(got), nil
	})

	foreground := metav1.DeletePropagationForeground
	if err := ns.Client.AppsV1().Deployments(ns.Name).Delete(ctx, "echo", metav1.DeleteOptions{PropagationPolicy: &foreground}); err != nil {
		t.Fatalf("delete deployment: %v", err)
	}
	waitFor(t, 60*time.Second, "all echo pods gone", func() (bool, string, error) {
		left := listPods(t, ns, "app=echo")
		return len(left) == 0, fmt.Sprintf("%d pods", len(left)), nil
	})
	waitProcessCount(t, ns.Name+"/", 0, 10*time.Second)
	// Each pod's network namespace (and with it its address) went with it.
	for _, ip := range usedIPs {
		if path := podNetnsPath(c.Config.Netns, ip); fileExists(path) {
			t.Errorf("network namespace %s of a deleted pod is left behind", path)
		}
	}
}

// podNetnsPath is where `ip netns` keeps the namespace of the pod with this IP.
func podNetnsPath(clusterNetns, ip string) string {
	a := netip.MustParseAddr(ip).As4()
	return fmt.Sprintf("/run/netns/%s-p-%d-%d", clusterNetns, a[2], a[3])
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func scale(t *testing.T, ns *clustertest.Namespace, replicas int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns.Name},
		Spec:       autoscalingv1.ScaleSpec{Replicas: replicas},
	}
	if _, err := ns.Client.AppsV1().Deployments(ns.Name).UpdateScale(ctx, "echo", s, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("scale to %d: %v", replicas, err)
	}
}

// getEcho asks echo-basic at a pod IP; the client dials inside the cluster's namespace.
func getEcho(t *testing.T, client *http.Client, ip string) echoResponse {
	t.Helper()
	url := "http://" + ip + ":3000/e2e"
	var got echoResponse
	for attempt := 1; ; attempt++ {
		err := func() error {
			resp, err := client.Get(url)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			if err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %s", resp.Status, body)
			}
			return json.Unmarshal(body, &got)
		}()
		if err == nil {
			return got
		}
		if attempt == 3 {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// assertPodToPod requests echo-basic at targetIP from inside another pod's
// network namespace: pods reach each other through the cluster namespace.
func assertPodToPod(t *testing.T, fromPod, targetIP, wantPod string) {
	t.Helper()
	pids, err := node.PodProcesses(fromPod)
	if err != nil || len(pids) != 1 {
		t.Fatalf("process of %s: %v %v", fromPod, pids, err)
	}
	out, err := exec.Command("nsenter", "--target", strconv.Itoa(pids[0]), "--net", "--",
		"curl", "-sS", "-m", "5", "http://"+targetIP+":3000/from-pod").CombinedOutput()
	if err != nil {
		t.Fatalf("pod-to-pod request from %s to %s: %v: %s", fromPod, targetIP, err, out)
	}
	var got echoResponse
	if err := json.Unmarshal(out, &got); err != nil || got.Pod != wantPod {
		t.Errorf("pod-to-pod answer %q (%v), want pod %s", out, err, wantPod)
	}
}

// assertLoopbackForward reaches a pod through `haptic-cluster forward`: the
// only path from the root namespace into the cluster is a loopback port.
func assertLoopbackForward(t *testing.T, c *clustertest.Cluster, podIP, wantPod string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	forward := exec.CommandContext(ctx, filepath.Join(c.Config.BinDir, "haptic-cluster"), "forward", strconv.Itoa(port), podIP+":3000")
	forward.Cancel = func() error { return forward.Process.Signal(syscall.SIGTERM) }
	if err := forward.Start(); err != nil {
		t.Fatalf("start forward: %v", err)
	}
	defer func() {
		cancel()
		_ = forward.Wait()
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/forwarded", port)
	var got echoResponse
	waitFor(t, 10*time.Second, "an answer through the loopback forward", func() (bool, string, error) {
		resp, err := http.Get(url)
		if err != nil {
			return false, err.Error(), nil
		}
		defer resp.Body.Close()
		err = json.NewDecoder(resp.Body).Decode(&got)
		return err == nil && got.Pod == wantPod, fmt.Sprintf("%+v %v", got, err), nil
	})
}

// assertAPIServerReachesPods goes through the API server's pod and service
// proxies: the API server dials pod IPs from the cluster namespace, the same
// path it takes to call admission webhooks (--enable-aggregator-routing).
func assertAPIServerReachesPods(t *testing.T, ns *clustertest.Namespace, pods []corev1.Pod) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	raw, err := ns.Client.CoreV1().Pods(ns.Name).ProxyGet("http", pods[0].Name, "3000", "/via-apiserver", nil).DoRaw(ctx)
	var got echoResponse
	if err != nil || json.Unmarshal(raw, &got) != nil || got.Pod != pods[0].Name {
		t.Fatalf("pod proxy to %s: %v: %s", pods[0].Name, err, raw)
	}
	raw, err = ns.Client.CoreV1().Services(ns.Name).ProxyGet("http", "echo", "80", "/via-service", nil).DoRaw(ctx)
	if err != nil || json.Unmarshal(raw, &got) != nil {
		t.Fatalf("service proxy to echo: %v: %s", err, raw)
	}
	if got.Pod != pods[0].Name && got.Pod != pods[1].Name {
		t.Errorf("service proxy answered by %q, not one of the echo pods", got.Pod)
	}
}
