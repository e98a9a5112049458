package runtimelimits

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     func(string) (string, bool)
		want    Ratio
		wantErr string
	}{
		{"unset", env(), Ratio{Value: 0.9}, ""},
		{"empty", env("AUTOMEMLIMIT", ""), Ratio{Value: 0.9}, ""},
		{"ratio", env("AUTOMEMLIMIT", "0.8"), Ratio{Value: 0.8}, ""},
		{"one", env("AUTOMEMLIMIT", "1"), Ratio{Value: 1}, ""},
		{"off", env("AUTOMEMLIMIT", "off"), Ratio{Disabled: true}, ""},
		{"explicit wins", env("GOMEMLIMIT", "1GiB", "AUTOMEMLIMIT", "bogus"), Ratio{Explicit: true}, ""},
		{"empty GOMEMLIMIT ignored", env("GOMEMLIMIT", "", "AUTOMEMLIMIT", "0.5"), Ratio{Value: 0.5}, ""},
		{"zero", env("AUTOMEMLIMIT", "0"), Ratio{}, "greater than 0"},
		{"negative", env("AUTOMEMLIMIT", "-0.5"), Ratio{}, "greater than 0"},
		{"above one", env("AUTOMEMLIMIT", "1.01"), Ratio{}, "at most 1"},
		{"NaN", env("AUTOMEMLIMIT", "NaN"), Ratio{}, "greater than 0"},
		{"garbage", env("AUTOMEMLIMIT", "90%"), Ratio{}, "not a number"},
		{"OFF is not off", env("AUTOMEMLIMIT", "OFF"), Ratio{}, "not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEnv(tc.env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func keepMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
}

func TestApplySetsRatioOfProviderLimit(t *testing.T) {
	keepMemoryLimit(t)
	var logs bytes.Buffer
	l, err := apply(slog.New(slog.NewTextHandler(&logs, nil)), env(), memlimit.Limit(512<<20))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(483183820); l.GOMEMLIMIT != want || debug.SetMemoryLimit(-1) != want {
		t.Errorf("GOMEMLIMIT = %d (runtime %d), want %d", l.GOMEMLIMIT, debug.SetMemoryLimit(-1), want)
	}
	if l.Source != SourceCgroup || l.GOMAXPROCS < 1 {
		t.Errorf("limits %+v", l)
	}
	if want := `gomemlimit="483183820 bytes (460.80 MiB)"`; !strings.Contains(logs.String(), want) {
		t.Errorf("log %q lacks %s", logs.String(), want)
	}
	if !strings.Contains(logs.String(), "gomaxprocs=") {
		t.Errorf("log %q lacks gomaxprocs", logs.String())
	}
}

func TestApplyHonoursEnvironment(t *testing.T) {
	keepMemoryLimit(t)
	called := false
	provider := func() (uint64, error) { called = true; return 1 << 30, nil }

	debug.SetMemoryLimit(123 << 20)
	l, err := apply(nil, env("GOMEMLIMIT", "123MiB"), provider)
	if err != nil || called || l.Source != SourceExplicit || l.GOMEMLIMIT != 123<<20 {
		t.Errorf("explicit GOMEMLIMIT: %+v, %v, provider called %v", l, err, called)
	}

	l, err = apply(nil, env("AUTOMEMLIMIT", "off"), provider)
	if err != nil || called || l.Source != SourceOff || l.GOMEMLIMIT != 123<<20 {
		t.Errorf("AUTOMEMLIMIT=off: %+v, %v, provider called %v", l, err, called)
	}

	l, err = apply(nil, env("AUTOMEMLIMIT", "2"), provider)
	if err == nil || called || l.GOMEMLIMIT != 123<<20 {
		t.Errorf("AUTOMEMLIMIT=2: %+v, %v, provider called %v", l, err, called)
	}
}

func TestApplyNoLimitAndProviderError(t *testing.T) {
	keepMemoryLimit(t)
	l, err := apply(nil, env(), func() (uint64, error) { return 0, memlimit.ErrNoLimit })
	if err != nil || l.Source != SourceNoLimit || l.GOMEMLIMIT != math.MaxInt64 || l.MemLimitString() != "unlimited" {
		t.Errorf("no limit: %+v %q, %v", l, l.MemLimitString(), err)
	}

	boom := errors.New("boom")
	debug.SetMemoryLimit(77 << 20)
	l, err = apply(nil, env(), func() (uint64, error) { return 0, boom })
	if !errors.Is(err, boom) || l.GOMEMLIMIT != 77<<20 {
		t.Errorf("provider error: %+v, %v", l, err)
	}
}

func TestMemLimitString(t *testing.T) {
	for n, want := range map[int64]string{
		483183820:     "483183820 bytes (460.80 MiB)",
		512:           "512 bytes (512 B)",
		3 << 30:       "3221225472 bytes (3.00 GiB)",
		math.MaxInt64: "unlimited",
	} {
		if got := (Limits{GOMEMLIMIT: n}).MemLimitString(); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}
