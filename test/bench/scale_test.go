//go:build benchgw

package bench

import "fmt"

func (r *run) scale(res *ScenarioResult) error { return fmt.Errorf("not yet") }
