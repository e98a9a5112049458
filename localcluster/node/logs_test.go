package node

import "testing"

func TestLastLines(t *testing.T) {
	data := []byte("a\nb\nc\n")
	cases := map[int]string{0: "", 1: "c\n", 2: "b\nc\n", 3: "a\nb\nc\n", 9: "a\nb\nc\n"}
	for n, want := range cases {
		if got := string(lastLines(data, n)); got != want {
			t.Errorf("lastLines(%d) = %q, want %q", n, got, want)
		}
	}
	if got := string(lastLines([]byte("x\ny"), 1)); got != "y" {
		t.Errorf("without trailing newline: %q", got)
	}
}
