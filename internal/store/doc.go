// Package store admits watched objects into snapshots: it strips the ignored fields,
// applies the client-side field selector, converts each object once into its typed
// value (when the resource has a schema) and indexes it by the resource's indexBy.
// Validation tests build their snapshots here from fixtures; the controller feeds the
// same Builder from its informers.
package store
