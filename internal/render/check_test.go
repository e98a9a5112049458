package render

import "testing"

func TestChangedOutputIsChecked(t *testing.T) {
	prev := "global\n    maxconn 10\n"
	if err := checkChanged("config", "global\n    maxconn 10\n    x \"open\n", prev, true); err == nil {
		t.Fatal("a new line with an open quote passed")
	}
	if err := checkChanged("config", prev, prev, true); err != nil {
		t.Fatal(err)
	}
}
