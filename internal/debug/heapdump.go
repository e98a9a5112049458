package debug

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"time"
)

// heapDumpHeader starts every dump (https://golang.org/s/go15heapdump).
var heapDumpHeader = []byte("go1.7 heap dump\n")

// heapStats is what the size estimate and the completeness floor are derived from,
// read right after a forced GC.
type heapStats struct {
	objects uint64 // bytes in allocated heap object slots
	stacks  uint64 // bytes of heap memory reserved for goroutine stacks
}

func readHeapStats() heapStats {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
	}
	metrics.Read(s)
	var hs heapStats
	if s[0].Value.Kind() == metrics.KindUint64 {
		hs.objects = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		hs.stacks = s[1].Value.Uint64()
	}
	return hs
}

// dumpSlack covers the dump's fixed parts (types, itabs, roots, memory profile).
const dumpSlack = 16 << 20

// estimate is the space a dump is assumed to need. The dump holds each allocated
// object's full contents plus a record header and one entry per pointer field: about
// 1× the heap for large pointer-free objects, close to 2× for heaps of small
// pointer-rich ones (measured). The estimate takes the high end, because the file
// usually lands on the container's writable layer and filling it hurts more than a
// refused dump.
func (h heapStats) estimate() uint64 { return 2*h.objects + 2*h.stacks + dumpSlack }

// floor is the smallest plausible size of a complete dump: every object's contents are
// in it, so a file below half the heap measured just before writing was cut short.
func (h heapStats) floor() int64 {
	return max(int64(h.objects/2), int64(len(heapDumpHeader)))
}

// httpError writes a plain-text error response.
func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	http.Error(w, fmt.Sprintf(format, args...), code)
}

func (s *Server) serveHeapDump(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		httpError(w, http.StatusMethodNotAllowed, "use GET or POST")
		return
	}
	if !s.dumping.CompareAndSwap(false, true) {
		httpError(w, http.StatusConflict, "a heap dump is already being written; retry when it has finished")
		return
	}
	defer s.dumping.Store(false)
	if s.beforeDump != nil {
		s.beforeDump()
	}

	code, err := s.writeHeapDump(w)
	if err != nil {
		s.logger.Warn("heap dump failed", "status", code, "error", err)
		if code != 0 {
			httpError(w, code, "heap dump: %v", err)
		}
	}
}

// writeHeapDump does the work of serveHeapDump. On failure before anything was sent
// it returns the status to answer with; a failure while streaming returns code 0.
func (s *Server) writeHeapDump(w http.ResponseWriter) (code int, err error) {
	start := time.Now()
	// Unreachable objects have no retainers to report; collect them first.
	runtime.GC()
	hs := s.heapStats()

	need := hs.estimate()
	free, err := s.freeSpace(s.dir)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		// No free-space check on this platform; the size floor still applies.
	case err != nil:
		return http.StatusInternalServerError, fmt.Errorf("free space in %s: %w", s.dir, err)
	case free < need:
		return http.StatusInsufficientStorage, fmt.Errorf(
			"a dump of this heap needs about %d bytes, %s has %d free; point %s at a larger volume",
			need, s.dir, free, EnvHeapDumpDir)
	}

	f, err := os.CreateTemp(s.dir, "haptic-heapdump-*")
	if err != nil {
		return http.StatusInternalServerError, fmt.Errorf("temporary file: %w", err)
	}
	defer f.Close()
	// Unlink at once: the open descriptor keeps the data, and nothing is left behind
	// whatever happens next.
	if err := os.Remove(f.Name()); err != nil {
		return http.StatusInternalServerError, fmt.Errorf("unlink temporary file: %w", err)
	}

	s.writeDump(f.Fd()) // stops the world until written

	fi, err := f.Stat()
	if err != nil {
		return http.StatusInternalServerError, fmt.Errorf("stat dump: %w", err)
	}
	size := fi.Size()
	if floor := hs.floor(); size < floor {
		return http.StatusInsufficientStorage, fmt.Errorf(
			"the dump is %d bytes, a complete one is at least %d: writing to %s most likely ran out of space",
			size, floor, s.dir)
	}
	head := make([]byte, len(heapDumpHeader))
	if _, err := f.ReadAt(head, 0); err != nil {
		return http.StatusInternalServerError, fmt.Errorf("read dump header: %w", err)
	}
	if !bytes.Equal(head, heapDumpHeader) {
		return http.StatusInternalServerError, fmt.Errorf("the dump does not start with the heap dump header (%q)", head)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return http.StatusInternalServerError, fmt.Errorf("rewind dump: %w", err)
	}
	written := time.Since(start)

	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.Header().Set("Content-Disposition", `attachment; filename="heap.dump"`)
	w.WriteHeader(http.StatusOK)
	n, err := io.Copy(w, f)
	if err != nil {
		return 0, fmt.Errorf("stream dump after %d of %d bytes: %w", n, size, err)
	}
	s.logger.Info("heap dump served", "bytes", size, "heap_objects_bytes", hs.objects,
		"write", written.Round(time.Millisecond), "total", time.Since(start).Round(time.Millisecond))
	return http.StatusOK, nil
}
