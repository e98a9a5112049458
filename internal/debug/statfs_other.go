//go:build !(linux || darwin)

package debug

import "errors"

func freeSpace(string) (uint64, error) { return 0, errors.ErrUnsupported }
