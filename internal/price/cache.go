package price

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// MaxListBytes bounds a downloaded or cached list (OpenRouter's full list is
// a few hundred KiB).
const MaxListBytes = 16 << 20

// CachePath returns the cache file under coagent8's state directory.
func CachePath(stateDir string) string {
	return filepath.Join(stateDir, "cache", "openrouter-models.json")
}

// cacheFile is the on-disk form: the list exactly as received plus when and
// where it was fetched.
type cacheFile struct {
	SchemaVersion int             `json:"schemaVersion"`
	URL           string          `json:"url"`
	FetchedAt     time.Time       `json:"fetchedAt"`
	List          json.RawMessage `json:"list"`
}

// Save writes c to path atomically (temp file + rename, mode 0600), so a
// crash never leaves a half-written cache.
func (c *Catalog) Save(path string) error {
	b, err := json.Marshal(cacheFile{SchemaVersion: 1, URL: c.src.URL, FetchedAt: c.src.Date.UTC(), List: c.raw})
	if err != nil {
		return fmt.Errorf("encode price cache: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create price cache directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".prices-*.tmp")
	if err != nil {
		return fmt.Errorf("create price cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write price cache: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync price cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close price cache: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

// LoadCache reads a cache written by [Catalog.Save]. A missing file is
// fs.ErrNotExist; an unreadable or invalid one is another error.
func LoadCache(path string) (*Catalog, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readLimited(f)
	if err != nil {
		return nil, fmt.Errorf("read price cache: %w", err)
	}
	var cf cacheFile
	if err := json.Unmarshal(b, &cf); err != nil {
		return nil, fmt.Errorf("parse price cache: %w", err)
	}
	if cf.SchemaVersion != 1 || cf.FetchedAt.IsZero() {
		return nil, errors.New("parse price cache: unknown schemaVersion or no fetchedAt")
	}
	return Parse(cf.List, Source{Kind: KindCache, URL: cf.URL, Date: cf.FetchedAt})
}

// Status is what doctor shows about the catalog in force.
type Status struct {
	Source  Source `json:"source"`
	Models  int    `json:"models"` // distinct priced ids ([Catalog.Models])
	Warning string `json:"warning,omitempty"`
}

// Load returns the cached catalog at path, or the embedded snapshot when
// there is no usable cache. The status explains a fallback (for doctor);
// Load never fails, so governance always has the last good prices.
func Load(path string) (*Catalog, Status) {
	c, err := LoadCache(path)
	if err == nil {
		return c, Status{Source: c.Source(), Models: c.Models()}
	}
	e := Embedded()
	st := Status{Source: e.Source(), Models: e.Models()}
	if !errors.Is(err, fs.ErrNotExist) {
		// %v: the cause is shown, not matched; it names the cache file only.
		st.Warning = fmt.Sprintf("price cache ignored, using the embedded snapshot: %v", err)
	}
	return e, st
}
