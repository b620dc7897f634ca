package claude

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// modelCacheTTL bounds how long a resolved alias is reused. A stale entry
// can only cause a refusal, never a wrong model: the startup report of the
// real turn is checked against the approved model.
const modelCacheTTL = 24 * time.Hour

type modelEntry struct {
	Model    string    `json:"model"`
	Verified string    `json:"verified"`
	At       time.Time `json:"at"`
}

// cacheKey identifies a resolution: the executable's identity, the
// requested model and every variable that changes alias resolution.
func (b *Backend) modelKey(path, model string) string {
	h := sha256.New()
	if id, err := identity(path); err == nil {
		h.Write([]byte(id.path + "\x00" + id.mtime.UTC().String() + "\x00"))
		h.Write([]byte{byte(id.size), byte(id.size >> 8), byte(id.size >> 16), byte(id.size >> 24)})
	}
	env := b.environ()
	sort.Strings(env)
	for _, kv := range env {
		if strings.HasPrefix(kv, "ANTHROPIC_DEFAULT_") || strings.HasPrefix(kv, "CLAUDE_CONFIG_DIR=") ||
			strings.HasPrefix(kv, "ANTHROPIC_BASE_URL=") || strings.HasPrefix(kv, "CLAUDE_CODE_USE_") {
			h.Write([]byte(kv + "\x00"))
		}
	}
	h.Write([]byte("model=" + model))
	return hex.EncodeToString(h.Sum(nil))
}

func (b *Backend) cacheFile() string {
	if b.opts.CacheDir == "" {
		return ""
	}
	return filepath.Join(b.opts.CacheDir, "claude-models.json")
}

func (b *Backend) cachedModel(key string) (modelEntry, bool) {
	path := b.cacheFile()
	if path == "" {
		return modelEntry{}, false
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return modelEntry{}, false
	}
	var m map[string]modelEntry
	if json.Unmarshal(raw, &m) != nil {
		return modelEntry{}, false
	}
	e, ok := m[key]
	return e, ok && time.Since(e.At) < modelCacheTTL && e.Model != ""
}

// storeModel writes the entry atomically (temp file + rename); a failure
// only costs a probe next time.
func (b *Backend) storeModel(key string, e modelEntry) {
	path := b.cacheFile()
	if path == "" {
		return
	}
	m := map[string]modelEntry{}
	if raw, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(raw, &m)
	}
	for k, v := range m {
		if time.Since(v.At) >= modelCacheTTL {
			delete(m, k)
		}
	}
	m[key] = e
	raw, _ := json.Marshal(m)
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".claude-models-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(raw)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}
