package libraries

import "testing"

// TestLibrariesPassLint: no template of the default libraries prints object text
// without the writer of its output context (the lint haptic validate runs).
func TestLibrariesPassLint(t *testing.T) {
	for _, issue := range load(t).Engine.Lint() {
		t.Error(issue)
	}
}
