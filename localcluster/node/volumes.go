package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
)

// Mount is one mount a container's init sets up in its mount namespace.
type Mount struct {
	Source   string `json:"source,omitempty"` // host path to bind; empty with Tmpfs
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
	Tmpfs    bool   `json:"tmpfs,omitempty"`
}

// volumeSet holds the materialized volumes of a pod: name → host directory
// (or "" for a memory-backed emptyDir, mounted as tmpfs per container).
type volumeSet map[string]string

// tokenIssuer requests service-account tokens for projected volumes.
type tokenIssuer interface {
	token(ctx context.Context, pod *corev1.Pod, sa string, req authenticationv1.TokenRequestSpec) (string, error)
}

// prepareVolumes writes the pod's volume contents under dir/volumes.
func prepareVolumes(ctx context.Context, facts podFacts, dir string, src sources, tokens tokenIssuer) (volumeSet, error) {
	set := volumeSet{}
	for _, v := range facts.pod.Spec.Volumes {
		path := filepath.Join(dir, "volumes", v.Name)
		if v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
			set[v.Name] = ""
			continue
		}
		if err := os.MkdirAll(path, 0o777); err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		if err := fillVolume(ctx, facts, v, path, src, tokens); err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		set[v.Name] = path
	}
	return set, nil
}

func fillVolume(ctx context.Context, facts podFacts, v corev1.Volume, path string, src sources, tokens tokenIssuer) error {
	ns := facts.pod.Namespace
	switch {
	case v.EmptyDir != nil:
		return os.Chmod(path, 0o777)
	case v.ConfigMap != nil:
		return writeConfigMap(ns, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, path, src)
	case v.Secret != nil:
		return writeSecret(ns, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, path, src)
	case v.DownwardAPI != nil:
		return writeDownward(facts, v.DownwardAPI.Items, path)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if err := fillProjection(ctx, facts, s, path, src, tokens); err != nil {
				return err
			}
		}
		return nil
	case v.HostPath != nil:
		return fmt.Errorf("hostPath volumes are not supported by the process node")
	}
	return fmt.Errorf("unsupported volume type")
}

func fillProjection(ctx context.Context, facts podFacts, s corev1.VolumeProjection, path string, src sources, tokens tokenIssuer) error {
	ns := facts.pod.Namespace
	switch {
	case s.ConfigMap != nil:
		return writeConfigMap(ns, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, path, src)
	case s.Secret != nil:
		return writeSecret(ns, s.Secret.Name, s.Secret.Items, s.Secret.Optional, path, src)
	case s.DownwardAPI != nil:
		return writeDownward(facts, s.DownwardAPI.Items, path)
	case s.ServiceAccountToken != nil:
		if tokens == nil {
			return nil // refresh: the token lasts (the API server extends its expiry)
		}
		spec := authenticationv1.TokenRequestSpec{ExpirationSeconds: s.ServiceAccountToken.ExpirationSeconds}
		if s.ServiceAccountToken.Audience != "" {
			spec.Audiences = []string{s.ServiceAccountToken.Audience}
		}
		sa := facts.pod.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		token, err := tokens.token(ctx, facts.pod, sa, spec)
		if err != nil {
			return fmt.Errorf("service account token: %w", err)
		}
		return writeFile(path, s.ServiceAccountToken.Path, []byte(token), 0o600)
	}
	return nil
}

func writeConfigMap(ns, name string, items []corev1.KeyToPath, optional *bool, dir string, src sources) error {
	data, err := src.configMap(ns, name)
	if err != nil {
		if isOptional(optional) {
			return nil
		}
		return fmt.Errorf("configmap %s/%s: %w", ns, name, err)
	}
	files := make(map[string][]byte, len(data))
	for k, v := range data {
		files[k] = []byte(v)
	}
	return writeItems(files, items, dir)
}

func writeSecret(ns, name string, items []corev1.KeyToPath, optional *bool, dir string, src sources) error {
	data, err := src.secret(ns, name)
	if err != nil {
		if isOptional(optional) {
			return nil
		}
		return fmt.Errorf("secret %s/%s: %w", ns, name, err)
	}
	return writeItems(data, items, dir)
}

// writeItems writes every key as a file, or only the listed items at their paths.
func writeItems(data map[string][]byte, items []corev1.KeyToPath, dir string) error {
	if len(items) == 0 {
		for k, v := range data {
			if err := writeFile(dir, k, v, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	for _, item := range items {
		v, ok := data[item.Key]
		if !ok {
			return fmt.Errorf("key %s not found", item.Key)
		}
		mode := os.FileMode(0o644)
		if item.Mode != nil {
			mode = os.FileMode(*item.Mode)
		}
		if err := writeFile(dir, item.Path, v, mode); err != nil {
			return err
		}
	}
	return nil
}

func writeDownward(facts podFacts, items []corev1.DownwardAPIVolumeFile, dir string) error {
	for _, item := range items {
		value := ""
		if item.FieldRef != nil {
			v, err := fieldRef(facts, item.FieldRef.FieldPath)
			if err != nil {
				return err
			}
			value = v
		}
		if err := writeFile(dir, item.Path, []byte(value), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeFile replaces dir/rel atomically (write to a temporary file, rename), so
// a process reading the volume never sees a half-written file.
func writeFile(dir, rel string, data []byte, mode os.FileMode) error {
	path := filepath.Join(dir, filepath.Clean("/"+rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil // unchanged: do not wake file watchers
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return nil
}

// refreshVolumes rewrites the ConfigMap, Secret, downwardAPI and projected
// volumes of a running pod, as the kubelet syncs them: files are replaced by
// rename inside the bind-mounted directories, so containers see the new
// content (subPath mounts, as in Kubernetes, do not update).
func refreshVolumes(ctx context.Context, facts podFacts, vols volumeSet, src sources) error {
	for _, v := range facts.pod.Spec.Volumes {
		dir := vols[v.Name]
		if dir == "" || v.EmptyDir != nil {
			continue
		}
		if err := fillVolume(ctx, facts, v, dir, src, nil); err != nil {
			return fmt.Errorf("refresh volume %s: %w", v.Name, err)
		}
	}
	return nil
}

// containerMounts maps a container's volumeMounts to Mount entries.
func containerMounts(c *corev1.Container, vols volumeSet) ([]Mount, error) {
	var mounts []Mount
	for _, vm := range c.VolumeMounts {
		source, ok := vols[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volumeMount %s: no such volume", vm.Name)
		}
		m := Mount{Target: vm.MountPath, ReadOnly: vm.ReadOnly}
		if source == "" {
			m.Tmpfs = true
		} else {
			m.Source = source
			if vm.SubPath != "" {
				m.Source = filepath.Join(source, filepath.Clean("/"+vm.SubPath))
				if _, err := os.Stat(m.Source); os.IsNotExist(err) {
					if err := os.MkdirAll(m.Source, 0o777); err != nil {
						return nil, fmt.Errorf("subPath %s: %w", vm.SubPath, err)
					}
				}
			}
		}
		mounts = append(mounts, m)
	}
	return mounts, nil
}
