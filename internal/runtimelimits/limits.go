package runtimelimits

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// Environment variables read by ApplyMemoryLimit.
const (
	EnvAutoMemLimit = "AUTOMEMLIMIT"
	EnvGoMemLimit   = "GOMEMLIMIT"
)

// DefaultRatio is the share of the container memory limit given to GOMEMLIMIT when
// AUTOMEMLIMIT is unset; the rest is headroom for memory the Go heap does not count.
const DefaultRatio = 0.9

// Where the memory limit came from.
const (
	SourceCgroup   = "cgroup"     // set from the container's memory limit
	SourceNoLimit  = "none"       // no container memory limit was found
	SourceExplicit = "GOMEMLIMIT" // set by the GOMEMLIMIT environment variable
	SourceOff      = "off"        // AUTOMEMLIMIT=off
)

// Limits is the runtime's state after ApplyMemoryLimit.
type Limits struct {
	GOMAXPROCS int
	GOMEMLIMIT int64  // bytes; math.MaxInt64 when there is no limit
	Source     string // one of the Source constants
}

// MemLimitString formats GOMEMLIMIT as `483183820 bytes (460.80 MiB)`, or "unlimited".
func (l Limits) MemLimitString() string {
	if l.GOMEMLIMIT <= 0 || l.GOMEMLIMIT == math.MaxInt64 {
		return "unlimited"
	}
	return fmt.Sprintf("%d bytes (%s)", l.GOMEMLIMIT, humanBytes(l.GOMEMLIMIT))
}

// LogAttrs returns the attributes for a startup log line:
// gomaxprocs=8 gomemlimit="483183820 bytes (460.80 MiB)".
func (l Limits) LogAttrs() []any {
	return []any{slog.Int("gomaxprocs", l.GOMAXPROCS), slog.String("gomemlimit", l.MemLimitString())}
}

// Ratio is the decision taken from the environment.
type Ratio struct {
	Value    float64 // meaningful when Disabled and Explicit are false
	Disabled bool    // AUTOMEMLIMIT=off
	Explicit bool    // GOMEMLIMIT is set; leave the runtime's limit alone
}

// ParseEnv decides what ApplyMemoryLimit does from the environment, read through
// lookup (os.LookupEnv in production). A non-empty GOMEMLIMIT wins over everything;
// then AUTOMEMLIMIT: unset or empty means DefaultRatio, "off" disables, and anything
// else must be a number with 0 < r <= 1.
func ParseEnv(lookup func(string) (string, bool)) (Ratio, error) {
	if v, ok := lookup(EnvGoMemLimit); ok && v != "" {
		return Ratio{Explicit: true}, nil
	}
	v, ok := lookup(EnvAutoMemLimit)
	switch {
	case !ok || v == "":
		return Ratio{Value: DefaultRatio}, nil
	case v == "off":
		return Ratio{Disabled: true}, nil
	}
	r, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return Ratio{}, fmt.Errorf("%s=%q: not a number or \"off\"", EnvAutoMemLimit, v)
	}
	if math.IsNaN(r) || r <= 0 || r > 1 {
		return Ratio{}, fmt.Errorf("%s=%q: the ratio must be greater than 0 and at most 1", EnvAutoMemLimit, v)
	}
	return Ratio{Value: r}, nil
}

// ApplyMemoryLimit sets GOMEMLIMIT from the container's memory limit as the
// environment asks (see ParseEnv), logs the resulting gomaxprocs and gomemlimit at
// info level, and returns them. On error (an invalid AUTOMEMLIMIT, an unreadable
// cgroup) the memory limit is left as it was, the returned Limits still describe the
// runtime, and callers normally log the error and carry on.
func ApplyMemoryLimit(logger *slog.Logger) (Limits, error) {
	return apply(logger, os.LookupEnv, memlimit.FromCgroup)
}

func apply(logger *slog.Logger, lookup func(string) (string, bool), provider memlimit.Provider) (Limits, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ratio, err := ParseEnv(lookup)
	if err != nil {
		return current(SourceNoLimit), fmt.Errorf("memory limit: %w", err)
	}
	var l Limits
	switch {
	case ratio.Explicit:
		l = current(SourceExplicit)
	case ratio.Disabled:
		l = current(SourceOff)
	default:
		// The library's Set would read AUTOMEMLIMIT and GOMEMLIMIT again with slightly
		// different rules (it rejects an empty AUTOMEMLIMIT); ParseEnv has decided, so
		// only its cgroup detection and ratio are used here.
		limit, err := memlimit.ApplyRatio(provider, ratio.Value)()
		switch {
		case errors.Is(err, memlimit.ErrNoLimit):
			l = current(SourceNoLimit)
		case err != nil:
			return current(SourceNoLimit), fmt.Errorf("memory limit from cgroup: %w", err)
		default:
			debug.SetMemoryLimit(int64(min(limit, math.MaxInt64)))
			l = current(SourceCgroup)
		}
	}
	logger.Info("runtime limits", append(l.LogAttrs(), slog.String("gomemlimit_source", l.Source))...)
	return l, nil
}

func current(source string) Limits {
	return Limits{GOMAXPROCS: runtime.GOMAXPROCS(0), GOMEMLIMIT: debug.SetMemoryLimit(-1), Source: source}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
