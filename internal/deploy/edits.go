package deploy

import (
	"errors"
	"net/http"
	"strings"

	"github.com/haproxy-haptic/haptic/internal/agentapi"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// asEdits splits the changed files of a runtime apply into those sent whole and
// those sent as splices of the copy the pod runs (base): a route's few map lines
// then cost a few lines on the wire and in the agent, not its whole maps. New
// files, and files most of which changed, go whole.
func asEdits(base *bundle.Bundle, files []bundle.File) (whole []bundle.File, edits []agentapi.FileEdit) {
	type key struct {
		kind bundle.Kind
		name string
	}
	keyOf := func(f bundle.File) key {
		if f.Kind == bundle.KindConfig {
			return key{kind: f.Kind}
		}
		return key{f.Kind, f.Name}
	}
	running := make(map[key]bundle.File, len(base.Files))
	for _, f := range base.Files {
		running[keyOf(f)] = f
	}
	for _, f := range files {
		if old, ok := running[keyOf(f)]; ok {
			if e, ok := agentapi.EditOf(old, f); ok {
				edits = append(edits, e)
				continue
			}
		}
		whole = append(whole, f)
	}
	return whole, edits
}

// refusesField reports an agent older than a request field (400 from its strict
// decoder): file edits, add-server options.
func refusesField(err error, field string) bool {
	return refuses(err, `unknown field \"`+field+`\"`)
}

// refusesNewOps reports an agent older than add-server options or the
// set-ssl-ca-file operation.
func refusesNewOps(err error) bool {
	return refusesField(err, "options") || refuses(err, `unknown kind \"set-ssl-ca-file\"`)
}

func refuses(err error, what string) bool {
	var se *agentapi.StatusError
	return errors.As(err, &se) && se.Code == http.StatusBadRequest && strings.Contains(se.Body, what)
}
