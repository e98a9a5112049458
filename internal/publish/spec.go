package publish

import (
	"sort"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// MaxContent bounds the (encoded) content one HAProxyCfg carries; the API server
// refuses objects over 1.5 MiB. When compressed content still exceeds it, the
// largest files are published by name and checksum only (contentOmitted).
const MaxContent = 1 << 20

// BuildSpec turns a bundle into the HAProxyCfg spec. source names the
// HAProxyTemplateConfig. When the files' total content exceeds threshold bytes
// (threshold <= 0: v1alpha1.DefaultCompressionThreshold), every file's content is
// stored gzip+base64. Certificates are listed by name and checksum only.
func BuildSpec(b *bundle.Bundle, source string, threshold int) v1alpha1.HAProxyCfgSpec {
	if threshold <= 0 {
		threshold = v1alpha1.DefaultCompressionThreshold
	}
	spec := v1alpha1.HAProxyCfgSpec{Source: source, Checksum: b.Hash}
	// published are the files that carry content, in bundle order (kind, then name).
	var published []*v1alpha1.PublishedFile
	total := 0
	for _, f := range b.Files {
		if f.Kind == bundle.KindCert {
			spec.Certificates = append(spec.Certificates, v1alpha1.FileChecksum{Name: f.Name, Checksum: f.Hash})
			continue
		}
		total += f.Content.Len()
		// (a copy: the published object is written now and then, and a text in
		// pieces need not keep its flat form)
		pf := v1alpha1.PublishedFile{Name: f.Name, Checksum: f.Hash, Content: f.Content.Flat()}
		switch f.Kind {
		case bundle.KindConfig:
			spec.Config = pf
		case bundle.KindMap:
			spec.Maps = append(spec.Maps, pf)
		case bundle.KindCrtList:
			spec.CrtLists = append(spec.CrtLists, pf)
		default:
			spec.Files = append(spec.Files, pf)
		}
	}
	if spec.Config.Name == "" {
		spec.Config.Name = "haproxy.cfg"
	}
	published = append(published, &spec.Config)
	for _, list := range [][]v1alpha1.PublishedFile{spec.Maps, spec.Files, spec.CrtLists} {
		for i := range list {
			published = append(published, &list[i])
		}
	}
	if total <= threshold {
		return spec
	}
	total = 0
	for _, pf := range published {
		if pf.Content == "" {
			continue
		}
		pf.Content, pf.Encoding = compress(pf.Content), v1alpha1.EncodingGzipBase64
		total += len(pf.Content)
	}
	if total <= MaxContent {
		return spec
	}
	// Still too large: omit the largest contents first (stable on name for ties).
	sort.SliceStable(published, func(i, j int) bool { return len(published[i].Content) > len(published[j].Content) })
	for _, pf := range published {
		if total <= MaxContent {
			break
		}
		total -= len(pf.Content)
		pf.Content, pf.Encoding, pf.ContentOmitted = "", v1alpha1.EncodingPlain, true
	}
	return spec
}
