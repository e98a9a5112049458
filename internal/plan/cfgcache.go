package plan

import (
	"slices"
	"sync"

	"github.com/haproxy-haptic/haptic/internal/haproxy/config"
)

// parsedConfigs remembers the last parses of haproxy.cfg texts. With backends in
// pool slots every plan parses the running, the desired and the placed
// configuration, and a route's change leaves all three as they were: parsed
// once, not three times per change. A parse is shared: the planner only reads it.
var parsedConfigs = &configParses{}

// configParsesKept bounds the remembered parses (a fleet's running, desired and
// placed configurations, and the next ones).
const configParsesKept = 8

type configParse struct {
	text string
	cfg  *config.Config
	err  error
}

type configParses struct {
	mu   sync.Mutex
	list []configParse // oldest first
}

// parse is config.Parse(text), remembered.
func (c *configParses) parse(text string) (*config.Config, error) {
	c.mu.Lock()
	for _, p := range c.list {
		if p.text == text {
			c.mu.Unlock()
			return p.cfg, p.err
		}
	}
	c.mu.Unlock()
	cfg, err := config.Parse(text)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.list) == configParsesKept {
		c.list = slices.Delete(c.list, 0, 1)
	}
	c.list = append(c.list, configParse{text, cfg, err})
	return cfg, err
}
