package debug

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	rdebug "runtime/debug"
	"sync/atomic"
	"time"
)

// EnvHeapDumpDir names the directory heap dumps are written to before being streamed.
const EnvHeapDumpDir = "HAPTIC_HEAPDUMP_DIR"

// Options configure a Server.
type Options struct {
	// Logger receives one line per heap dump and the server's errors; nil discards.
	Logger *slog.Logger
	// HeapDumpDir is where /debug/heapdump writes its temporary file. Empty means
	// $HAPTIC_HEAPDUMP_DIR, else os.TempDir().
	HeapDumpDir string
}

// Server is the debug HTTP server. Create it with New, then ListenAndServe (or Listen
// and Serve).
type Server struct {
	logger *slog.Logger
	dir    string
	mux    *http.ServeMux

	dumping atomic.Bool

	// Replaceable in tests.
	freeSpace  func(dir string) (uint64, error)
	heapStats  func() heapStats
	writeDump  func(fd uintptr)
	beforeDump func() // called while holding the one-dump-at-a-time slot
}

// New builds a Server with the pprof, heap-dump and health routes.
func New(opts Options) *Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dir := opts.HeapDumpDir
	if dir == "" {
		dir = os.Getenv(EnvHeapDumpDir)
	}
	if dir == "" {
		dir = os.TempDir()
	}
	s := &Server{
		logger:    logger,
		dir:       dir,
		mux:       http.NewServeMux(),
		freeSpace: freeSpace,
		heapStats: readHeapStats,
		writeDump: rdebug.WriteHeapDump,
	}
	s.mux.HandleFunc("/debug/pprof/", pprof.Index)
	s.mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	s.mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	s.mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	s.mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s.mux.HandleFunc("/debug/heapdump", s.serveHeapDump)
	s.mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	return s
}

// HeapDumpDir is the directory heap dumps are written to.
func (s *Server) HeapDumpDir() string { return s.dir }

// Handle adds a route to the server's mux (http.ServeMux pattern syntax). It must be
// called before serving starts.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Handler is the server's routes, for mounting elsewhere or for tests.
func (s *Server) Handler() http.Handler { return s.mux }

// ListenAndServe listens on addr, which must be loopback (see ResolveLoopback), and
// serves until ctx is done.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := Listen(ctx, addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// shutdownGrace bounds how long Serve waits for requests in flight once ctx is done.
const shutdownGrace = 5 * time.Second

// Serve serves on ln until ctx is done, then shuts down, giving requests in flight a
// few seconds. It closes ln. The caller is responsible for ln being loopback; Listen
// makes one that is.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: CPU profiles and heap dumps legitimately take long.
		ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context {
			return context.WithoutCancel(ctx)
		},
	}
	s.logger.Info("debug server listening", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("debug server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		return fmt.Errorf("debug server shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("debug server: %w", err)
	}
	return nil
}
