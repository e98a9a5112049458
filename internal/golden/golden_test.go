package golden

import (
	"strings"
	"testing"
)

func TestFirstDifference(t *testing.T) {
	for _, tt := range []struct{ want, got, says string }{
		{"a\nb\nc", "a\nB\nc", "line 2:\n--- want\nb\n--- got\nB"},
		{"a\nb", "a\nb\nextra", "line 3:\n--- want\n\n--- got\nextra"},
		{"a", "a", "no difference"},
	} {
		if got := FirstDifference(tt.want, tt.got); !strings.Contains(got, tt.says) {
			t.Errorf("FirstDifference(%q, %q) = %q, want it to say %q", tt.want, tt.got, got, tt.says)
		}
	}
}
