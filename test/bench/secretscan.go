package bench

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// MinSecretLength is the shortest Secret value the scan looks for: shorter values
// ("true", "admin") match by accident everywhere.
const MinSecretLength = 8

// SecretValue is one value of a Secret the run created.
type SecretValue struct {
	Namespace string
	Name      string
	Key       string
	Value     []byte
}

// SecretMatch is one artifact that held a Secret value (in raw or base64 form).
// It names the Secret and key, never the value.
type SecretMatch struct {
	File   string `json:"file"`
	Secret string `json:"secret"` // namespace/name
	Key    string `json:"key"`
	Form   string `json:"form"` // raw or base64
}

// SecretScanReport is cluster/artifact-secret-scan.json.
type SecretScanReport struct {
	Pass           bool          `json:"pass"`
	SecretsScanned int           `json:"secrets_scanned"` // Secret objects in the inventory
	ValuesScanned  int           `json:"values_scanned"`  // values of at least MinSecretLength bytes
	FilesScanned   int           `json:"files_scanned"`
	Matches        []SecretMatch `json:"matches,omitempty"`
	Redacted       bool          `json:"redacted"` // every match was replaced with <redacted>
	Error          string        `json:"error,omitempty"`
}

// Redacted is what a matching byte sequence is replaced with.
const Redacted = "<redacted>"

// ScanArtifacts searches every regular file under dir for the raw and base64
// forms of each value, replaces matches with Redacted and verifies that no match
// remains. skip names files (relative to dir) that are not scanned: the report
// itself. The report's Pass is false when anything matched or the scan failed.
func ScanArtifacts(dir string, secrets int, values []SecretValue, skip ...string) SecretScanReport {
	rep := SecretScanReport{SecretsScanned: secrets}
	type needle struct {
		v    SecretValue
		form string
		b    []byte
	}
	var needles []needle
	for _, v := range values {
		if len(v.Value) < MinSecretLength {
			continue
		}
		rep.ValuesScanned++
		needles = append(needles,
			needle{v, "raw", v.Value},
			needle{v, "base64", []byte(base64.StdEncoding.EncodeToString(v.Value))})
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if !d.Type().IsRegular() || slices.Contains(skip, rel) {
			return nil
		}
		rep.FilesScanned++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		changed := false
		for _, n := range needles {
			if bytes.Contains(data, n.b) {
				rep.Matches = append(rep.Matches, SecretMatch{File: rel, Secret: n.v.Namespace + "/" + n.v.Name, Key: n.v.Key, Form: n.form})
				data = bytes.ReplaceAll(data, n.b, []byte(Redacted))
				changed = true
			}
		}
		if !changed {
			return nil
		}
		for _, n := range needles {
			if bytes.Contains(data, n.b) {
				return fmt.Errorf("%s: a value survived redaction", rel)
			}
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(path, data, info.Mode().Perm())
	})
	if err != nil {
		rep.Error = err.Error()
	}
	rep.Redacted = err == nil
	rep.Pass = err == nil && len(rep.Matches) == 0
	return rep
}
