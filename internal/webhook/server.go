package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Server serves the Handler over HTTPS on Listener with the certificate in CertDir
// (tls.crt, tls.key: a mounted kubernetes.io/tls Secret), read again whenever the
// files change, so that a rotated Secret needs no restart.
type Server struct {
	Handler  *Handler
	Listener net.Listener
	CertDir  string
	Log      *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	modTime time.Time
}

// Run serves until ctx ends. It fails at once when the certificate cannot be read.
func (s *Server) Run(ctx context.Context) error {
	if _, err := s.certificate(nil); err != nil {
		return err
	}
	if s.Handler.Forward != nil && s.Handler.peers == nil {
		s.Handler.peers = s.peerClient()
	}
	mux := http.NewServeMux()
	mux.Handle("/validate", s.Handler)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.certificate},
	}
	errs := make(chan error, 1)
	go func() { errs <- srv.ServeTLS(s.Listener, "", "") }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		return nil
	case err := <-errs:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("webhook server: %w", err)
	}
}

// certificate returns the key pair, loading it again when tls.crt changed.
func (s *Server) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	crt, key := filepath.Join(s.CertDir, "tls.crt"), filepath.Join(s.CertDir, "tls.key")
	st, err := os.Stat(crt)
	if err != nil {
		return s.cached(fmt.Errorf("webhook certificate: %w", err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cert != nil && st.ModTime().Equal(s.modTime) {
		return s.cert, nil
	}
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		if s.cert != nil {
			s.log().Warn("webhook certificate unreadable; serving the previous one", "error", err)
			return s.cert, nil
		}
		return nil, fmt.Errorf("webhook certificate %s: %w", s.CertDir, err)
	}
	if s.cert != nil {
		s.log().Info("webhook certificate reloaded", "dir", s.CertDir)
	}
	s.cert, s.modTime = &pair, st.ModTime()
	return s.cert, nil
}

// cached is the previous certificate when there is one (the files are being
// replaced), else err.
func (s *Server) cached(err error) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cert != nil {
		return s.cert, nil
	}
	return nil, err
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}
