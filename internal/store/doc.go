// Package store admits watched objects into snapshots: it strips the ignored fields,
// applies the client-side field selector, checks each object against its schema (when
// the resource has one; the typed value is made on first read), has the renderer make
// the compact forms its helpers read (Builder.Prepare) and indexes it by the
// resource's indexBy.
// Validation tests build their snapshots here from fixtures; the controller feeds the
// same Builder from its informers.
package store
