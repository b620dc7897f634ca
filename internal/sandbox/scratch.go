package sandbox

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// MaxScratchFile bounds one [ScratchFile] (64 MiB): it carries a CLI's
// own state between runs (a session transcript), never a data set.
const MaxScratchFile = 64 << 20

// ScratchFile is one file carried into or out of an agent run's scratch
// directory, /job/scratch (the command's job-scoped HOME). Files are
// copied, never bound: the host file is never open to the command, and a
// file carried out is written only after the command's tree has ended.
type ScratchFile struct {
	// Rel is the path beneath /job/scratch: relative, clean, no "..", no
	// control bytes, at most 8 components.
	Rel string
	// Host is the canonical absolute host file: the regular file copied
	// in (not followed if a symlink), or the file created (exclusively,
	// mode 0600, its directory must exist) from the command's file.
	Host string
	// Max bounds the file in bytes, in (0, MaxScratchFile]. A file
	// carried in that is larger refuses the run; one carried out that is
	// larger is not written.
	Max int64
}

// admitScratch validates the files carried into or out of scratch.
func admitScratch(files []ScratchFile) ([]ScratchFile, error) {
	out := make([]ScratchFile, 0, len(files))
	for _, f := range files {
		clean := path.Clean(f.Rel)
		switch {
		case f.Rel == "" || clean != f.Rel || path.IsAbs(clean) || clean == "." || strings.HasPrefix(clean, "../") ||
			clean == ".." || hasControl(clean) || strings.Count(clean, "/") >= 8:
			return nil, invalid("sandbox.scratch", fmt.Sprintf("scratch path %q is not a clean relative path", f.Rel))
		case !filepath.IsAbs(f.Host) || filepath.Clean(f.Host) != f.Host || hasControl(f.Host):
			return nil, invalid("sandbox.scratch", fmt.Sprintf("host file %q of scratch path %q is not a clean absolute path", f.Host, f.Rel))
		case f.Max <= 0 || f.Max > MaxScratchFile:
			return nil, invalid("sandbox.scratch", fmt.Sprintf("scratch path %q: bound %d is outside (0, %d]", f.Rel, f.Max, MaxScratchFile))
		}
		out = append(out, f)
	}
	return out, nil
}
