package validate

import (
	v1alpha1 "github.com/haproxy-haptic/haptic/api/v1alpha1"
	"github.com/haproxy-haptic/haptic/internal/bundle"
)

// LayoutFor is the production layout a config's dataplane settings describe; unset
// fields take DefaultLayout's values, so it works on configs that were not defaulted.
func LayoutFor(d v1alpha1.DataplaneSettings) bundle.Layout {
	l := DefaultLayout
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&l.ConfigFile, d.ConfigFile},
		{&l.MapsDir, d.MapsDir},
		{&l.SSLCertsDir, d.SSLCertsDir},
		{&l.GeneralStorageDir, d.GeneralStorageDir},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	return l
}
