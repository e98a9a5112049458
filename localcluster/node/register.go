package node

import (
	"context"
	"fmt"
	"runtime"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	leaseDuration     = 40 * time.Second
	leaseRenewEvery   = 10 * time.Second
	statusUpdateEvery = time.Minute
)

// nodeCapacity is generous: pods are processes and the scheduler should not
// turn down a test's resource requests.
func nodeCapacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("32"),
		corev1.ResourceMemory:           resource.MustParse("64Gi"),
		corev1.ResourcePods:             resource.MustParse("500"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
}

func (n *Node) nodeStatus() corev1.NodeStatus {
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return corev1.NodeStatus{
		Capacity:    nodeCapacity(),
		Allocatable: nodeCapacity(),
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeReady, corev1.ConditionTrue, "ProcessNodeReady"),
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "ProcessNodeHasSufficientMemory"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "ProcessNodeHasNoDiskPressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "ProcessNodeHasSufficientPID"),
		},
		// No Hostname address: the name does not resolve, and the API server
		// would try it first when proxying kubectl logs.
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.cfg.HostIP}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: KubeletPort}},
		NodeInfo: corev1.NodeSystemInfo{
			OperatingSystem:         "linux",
			Architecture:            runtime.GOARCH,
			KubeletVersion:          "v1.37.2",
			ContainerRuntimeVersion: "haptic-process://1",
		},
	}
}

// register creates the Node, or refreshes its status if it exists.
func (n *Node) register(ctx context.Context) error {
	nodes := n.client.CoreV1().Nodes()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: n.cfg.NodeName,
			Labels: map[string]string{
				"kubernetes.io/hostname": n.cfg.NodeName,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     runtime.GOARCH,
			},
		},
	}
	created, err := nodes.Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = nodes.Get(ctx, n.cfg.NodeName, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("register node %s: %w", n.cfg.NodeName, err)
	}
	created.Status = n.nodeStatus()
	if _, err := nodes.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("set node %s status: %w", n.cfg.NodeName, err)
	}
	return n.renewLease(ctx)
}

// heartbeat renews the node Lease and, less often, the status conditions, so
// the node lifecycle controller keeps the node Ready.
func (n *Node) heartbeat(ctx context.Context) {
	leaseTicker := time.NewTicker(leaseRenewEvery)
	defer leaseTicker.Stop()
	statusTicker := time.NewTicker(statusUpdateEvery)
	defer statusTicker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-leaseTicker.C:
			if err := n.renewLease(ctx); err != nil {
				n.logf("renew lease: %v", err)
			}
		case <-statusTicker.C:
			if err := n.updateNodeStatus(ctx); err != nil {
				n.logf("update node status: %v", err)
			}
		}
	}
}

func (n *Node) updateNodeStatus(ctx context.Context) error {
	node, err := n.client.CoreV1().Nodes().Get(ctx, n.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get node: %w", err)
	}
	node.Status = n.nodeStatus()
	if _, err := n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update node status: %w", err)
	}
	return nil
}

func (n *Node) renewLease(ctx context.Context) error {
	leases := n.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	seconds := int32(leaseDuration.Seconds())
	lease, err := leases.Get(ctx, n.cfg.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: n.cfg.NodeName, Namespace: corev1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: &n.cfg.NodeName, LeaseDurationSeconds: &seconds, RenewTime: &now,
			},
		}
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create lease: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get lease: %w", err)
	}
	lease.Spec.RenewTime = &now
	lease.Spec.HolderIdentity = &n.cfg.NodeName
	lease.Spec.LeaseDurationSeconds = &seconds
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	return nil
}
