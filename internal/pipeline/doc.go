// Package pipeline assembles the offline half of the data path for one config:
// schemas → store builder → compiled templates, and renders validation-test fixtures
// through it. `haptic validate`, `haptic benchmark` and `haptic render` use it; the
// controller uses the same stages with informer-fed stores.
package pipeline
