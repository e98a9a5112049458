package clustertest

import (
	"bytes"
	"sync"
)

// LogBuffer collects the output of several goroutines and processes (controllers
// started by a test, their children) for the test to read or print on failure.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
