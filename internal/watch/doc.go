// Package watch feeds the live store from the API server. Informers come in one set
// per config (Informers) that every consumer — the stores, the status writer —
// shares: one informer per resource, as narrow as its consumers allow (metadata
// only, a server-side selector, when all consumers ask for it); each consumer
// filters and reduces what it reads without touching the cache. Per watched
// resource the Watcher has a consumer (equality label selector; ignored fields — and
// status, unless the resource sets watchStatus — stripped before anything reaches
// the store), a leading-edge debouncer, and for on-demand stores only metadata
// resident, bodies fetched when a template reads them. An informer keeps each object
// sharing what it repeats (intern.go): strings and small subtrees across objects, and
// every unchanged subtree with the version it replaced.
//
// An update whose relevant content equals what the store holds (only status or
// server-kept metadata changed, e.g. the controller's own status writes) is dropped
// before the debouncer and reported through OnDropped.
//
// Nothing is reported before every informer has synced: a render must never see a
// half-listed cluster.
package watch
