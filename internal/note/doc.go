// Package note holds what templates tell the controller besides the bundle: typed
// notes about the objects they read, such as a Gateway listener the configuration
// leaves out because its port is taken.
//
// Templates write them with the note() builtin (internal/render); a render returns
// them in render.Result.Notes, sorted and without duplicates. They are never part of
// the bundle: HAProxy never sees them and they do not change its hash. The status
// computation (internal/status) reads them, and validation tests assert them through
// the "notes" target (internal/validate), where each note is one line, String().
//
// Notes are plain data: this package imports nothing heavy, so status can read them
// without the template engine.
package note
