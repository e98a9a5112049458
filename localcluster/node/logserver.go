package node

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// KubeletPort is where the node serves the part of the kubelet API the API
// server proxies for `kubectl logs` (GET /containerLogs/NS/POD/CONTAINER).
const KubeletPort = 10250

// serveLogs serves container logs on HostIP:KubeletPort until ctx ends. The
// API server does not verify kubelet certificates unless told to, so a
// self-signed one is enough; the listener exists only inside the cluster's
// namespace.
func (n *Node) serveLogs(ctx context.Context) error {
	cert, err := selfSignedCert(n.cfg.HostIP)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/containerLogs/", n.handleContainerLogs)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	srv := &http.Server{
		Addr:              net.JoinHostPort(n.cfg.HostIP, strconv.Itoa(KubeletPort)),
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	if err := srv.ListenAndServeTLS("", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve container logs: %w", err)
	}
	return nil
}

// handleContainerLogs serves one container's log with tailLines, limitBytes
// and follow (polling the file; the request's context bounds it).
func (n *Node) handleContainerLogs(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" || strings.Contains(r.URL.Path, "..") {
		http.Error(w, "want /containerLogs/NAMESPACE/POD/CONTAINER", http.StatusBadRequest)
		return
	}
	path := filepath.Join(n.cfg.PodsDir, parts[0]+"_"+parts[1], parts[2]+".log")
	data, err := os.ReadFile(path)
	if err != nil {
		http.Error(w, fmt.Sprintf("no logs for %s/%s container %s", parts[0], parts[1], parts[2]), http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	if tail, err := strconv.Atoi(q.Get("tailLines")); err == nil && tail >= 0 {
		data = lastLines(data, tail)
	}
	if limit, err := strconv.Atoi(q.Get("limitBytes")); err == nil && limit >= 0 && limit < len(data) {
		data = data[:limit]
	}
	w.Header().Set("Content-Type", "text/plain")
	if _, err := w.Write(data); err != nil || q.Get("follow") != "true" {
		return
	}
	n.followLog(r.Context(), w, path, int64(len(data)))
}

// followLog streams what is appended to path after offset until the client goes.
func (n *Node) followLog(ctx context.Context, w http.ResponseWriter, path string, offset int64) {
	flusher, _ := w.(http.Flusher)
	for {
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
		f, err := os.Open(path)
		if err != nil {
			return // the pod is gone
		}
		if _, err := f.Seek(offset, io.SeekStart); err == nil {
			written, _ := io.Copy(w, f)
			offset += written
		}
		f.Close()
	}
}

// lastLines returns the last n lines of data.
func lastLines(data []byte, n int) []byte {
	if n == 0 {
		return nil
	}
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	for i := 0; i < n; i++ {
		j := bytes.LastIndexByte(data[:end], '\n')
		if j < 0 {
			return data
		}
		end = j
	}
	return data[end+1:]
}

func selfSignedCert(ip string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generate kubelet key: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "haptic-node"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP(ip)},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("create kubelet certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
