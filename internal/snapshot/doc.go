// Package snapshot is the resolved, immutable view of watched objects that one render
// reads. A Snapshot holds one Store per watched resource; each Store keeps its objects
// sorted by namespace and name (so renders are deterministic) and indexed by the
// resource's indexBy paths for Fetch and GetSingle. A store indexed by namespace and
// name answers by binary search, and by a map once a version of it was searched often
// (a full render; lookup.go).
//
// A snapshot is one of the three plain data types between stages and never imports
// client-go: objects arrive as decoded JSON plus, when the resource has a schema, a
// typed value made on its first typed read, and the compact forms Go helpers made of it
// (Forms), kept with the object version.
package snapshot
