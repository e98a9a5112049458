package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HAProxyCfg publishes the configuration the controller rendered from an
// HAProxyTemplateConfig, and what each HAProxy pod runs. It is written by the
// controller for observability (kubectl get hcfg); editing it changes nothing.
//
// Certificates are listed by name and checksum only: their content never appears.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=hcfg
// +kubebuilder:printcolumn:name="Checksum",type=string,JSONPath=`.spec.checksum`
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.source`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type HAProxyCfg struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   HAProxyCfgSpec   `json:"spec"`
	Status HAProxyCfgStatus `json:"status,omitempty"`
}

// HAProxyCfgList is a list of HAProxyCfg.
//
// +kubebuilder:object:root=true
type HAProxyCfgList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HAProxyCfg `json:"items"`
}

// HAProxyCfgSpec is the rendered configuration.
type HAProxyCfgSpec struct {
	// Source is the name of the HAProxyTemplateConfig (same namespace) it was rendered from.
	Source string `json:"source"`
	// Checksum identifies the whole rendered file set (the bundle hash the pods report).
	Checksum string `json:"checksum"`
	// Config is haproxy.cfg.
	Config PublishedFile `json:"config"`
	// Maps are the HAProxy map files, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Maps []PublishedFile `json:"maps,omitempty"`
	// Files are the general files, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Files []PublishedFile `json:"files,omitempty"`
	// CrtLists are the crt-list files, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	CrtLists []PublishedFile `json:"crtLists,omitempty"`
	// Certificates are listed by name and checksum; their content is never published.
	// +optional
	// +listType=map
	// +listMapKey=name
	Certificates []FileChecksum `json:"certificates,omitempty"`
}

// Content encodings of a PublishedFile.
const (
	// EncodingPlain (empty) is the content as rendered.
	EncodingPlain = ""
	// EncodingGzipBase64 is gzip-compressed content, base64 (standard) encoded.
	EncodingGzipBase64 = "gzip+base64"
)

// PublishedFile is one rendered file.
type PublishedFile struct {
	Name string `json:"name"`
	// Checksum is the content hash (hex) of the rendered content: the SHA-256 of a
	// content under 32 KiB, else the SHA-256 of the SHA-256s of its content-defined
	// chunks (docs/design/agent-protocol.md, "Content hashes").
	Checksum string `json:"checksum"`
	// Content is the file, encoded as Encoding says.
	// +optional
	Content string `json:"content,omitempty"`
	// Encoding is empty for plain content or gzip+base64 when the published file set
	// was too large to store uncompressed.
	// +kubebuilder:validation:Enum="";gzip+base64
	// +optional
	Encoding string `json:"encoding,omitempty"`
	// ContentOmitted is true when even compressed content would not fit in the object.
	// +optional
	ContentOmitted bool `json:"contentOmitted,omitempty"`
}

// FileChecksum names a file and its content's checksum.
type FileChecksum struct {
	Name     string `json:"name"`
	Checksum string `json:"checksum"`
}

// HAProxyCfgStatus reports what each HAProxy pod runs.
type HAProxyCfgStatus struct {
	// ObservedGeneration is the spec generation the status was written for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Pods are the HAProxy pods served, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Pods []HAProxyCfgPodStatus `json:"pods,omitempty"`
}

// HAProxyCfgPodStatus is one pod's deployment state.
type HAProxyCfgPodStatus struct {
	// Name of the HAProxy pod.
	Name string `json:"name"`
	// Checksum of the file set the pod last accepted.
	// +optional
	Checksum string `json:"checksum,omitempty"`
	// LastReloadTime is when an apply last reloaded HAProxy.
	// +optional
	LastReloadTime *metav1.Time `json:"lastReloadTime,omitempty"`
	// LastOperation summarises the last apply: "runtime: 3 operations",
	// "reload: backend be_x: added".
	// +optional
	LastOperation string `json:"lastOperation,omitempty"`
	// LastError is the last apply's error; empty after a success.
	// +optional
	LastError string `json:"lastError,omitempty"`
}
