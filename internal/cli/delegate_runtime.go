package cli

import (
	"os"
	"sync"

	"github.com/coagent8/coagent8/internal/delegation"
)

// runtimeCache keeps, per backend and CLI path, the runtime this process
// resolved and qualified, with its executable's file info then. Without
// it every job digested the 373 MB Claude Code executable twice and ran
// its --version in the candidate sandbox again: seconds of overhead per
// job (bench/delegate BenchmarkJobOverhead, docs/PERFORMANCE.md). Reuse is
// only an optimisation: [delegation.Runner.Run] still checks, before each
// job, that the executable's file key is the qualified one (or its fresh
// digest is), so a replaced binary is refused either way; the cache only
// decides when to qualify again (the file changed identity, size or
// modification time). Safe for concurrent use.
type runtimeCache struct {
	mu sync.Mutex
	m  map[string]cachedRuntime
}

type cachedRuntime struct {
	rt delegation.Runtime
	fi os.FileInfo
}

// get returns the runtime cached for key while path (the CLI path it was
// resolved from, symbolic links followed) is the same file, unmodified.
func (c *runtimeCache) get(key, path string) (delegation.Runtime, bool) {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if !ok {
		return delegation.Runtime{}, false
	}
	fi, err := os.Stat(path)
	if err != nil || !os.SameFile(fi, e.fi) || fi.Size() != e.fi.Size() || !fi.ModTime().Equal(e.fi.ModTime()) {
		return delegation.Runtime{}, false
	}
	return e.rt, true
}

// put caches rt, qualified just now, under key with fi, the file info of
// its CLI path read before it was resolved (a write in between changes the
// modification time the next get compares).
func (c *runtimeCache) put(key string, rt delegation.Runtime, fi os.FileInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedRuntime{}
	}
	c.m[key] = cachedRuntime{rt: rt, fi: fi}
}
