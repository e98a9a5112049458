package publish

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"

	"github.com/haproxy-haptic/haptic/api/v1alpha1"
)

// compress returns content gzip-compressed and base64-encoded (EncodingGzipBase64).
func compress(content string) string {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression) // a valid level never fails
	_, _ = io.WriteString(zw, content)                          // writes to a bytes.Buffer never fail
	_ = zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// maxDecoded bounds what Decode inflates: a published file is never larger.
const maxDecoded = 256 << 20

// Decode returns a published file's content as rendered, whatever its encoding.
func Decode(f v1alpha1.PublishedFile) (string, error) {
	switch f.Encoding {
	case v1alpha1.EncodingPlain:
		return f.Content, nil
	case v1alpha1.EncodingGzipBase64:
		raw, err := base64.StdEncoding.DecodeString(f.Content)
		if err != nil {
			return "", fmt.Errorf("decode %s: %w", f.Name, err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return "", fmt.Errorf("decode %s: %w", f.Name, err)
		}
		out, err := io.ReadAll(io.LimitReader(zr, maxDecoded))
		if err != nil {
			return "", fmt.Errorf("decode %s: %w", f.Name, err)
		}
		return string(out), nil
	default:
		return "", fmt.Errorf("decode %s: unknown encoding %q", f.Name, f.Encoding)
	}
}
