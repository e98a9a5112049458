// Package watch feeds the live store from the API server: one dynamic informer per
// watched resource (server-side equality label selector, ignored fields — and status,
// unless the resource sets watchStatus — stripped before anything is cached), a
// leading-edge debouncer per resource, and on-demand stores that keep only metadata
// resident and fetch bodies when a template reads them.
//
// An update whose relevant content equals what the store holds (only status or
// server-kept metadata changed, e.g. the controller's own status writes) is dropped
// before the debouncer and reported through OnDropped.
//
// Nothing is reported before every informer has synced: a render must never see a
// half-listed cluster.
package watch
