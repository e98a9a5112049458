package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of every type in this package.
var GroupVersion = schema.GroupVersion{Group: "haproxy-haptic.org", Version: "v1alpha1"}

// Kind names used when decoding files that hold several documents.
const (
	KindHAProxyTemplateConfig = "HAProxyTemplateConfig"
	KindHAProxyCfg            = "HAProxyCfg"
)

// AddToScheme registers the package's types with a runtime.Scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &HAProxyTemplateConfig{}, &HAProxyTemplateConfigList{},
		&HAProxyCfg{}, &HAProxyCfgList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
