package quarantine

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/candidate"
)

// TestBuildNewlineNameCannotInjectIndexEntry: a delegated agent names a
// file "x\n120000 <id>\tlink" so that a newline-terminated
// `update-index --index-info` record would read as a second entry: a
// symbolic link "link" to /etc that no change describes, so it escapes
// the symlink.escapes scan. The name must stay one literal path.
func TestBuildNewlineNameCannotInjectIndexEntry(t *testing.T) {
	repo, base := newRepo(t, map[string]string{"main.go": "package main\n"})
	up := t.TempDir()
	// The blob "/etc" is in the scratch objects as the content of t.txt.
	writeFile(t, up, "t.txt", "/etc")
	h := sha1.New()
	fmt.Fprintf(h, "blob 4\x00/etc")
	evil := "x\n120000 " + hex.EncodeToString(h.Sum(nil)) + "\tlink"
	writeFile(t, up, evil, "y\n")
	changes := []candidate.Change{
		change(candidate.Added, "t.txt", 0o644),
		change(candidate.Added, evil, 0o644),
	}
	c, err := Build(context.Background(), Input{Repo: repo, Base: base, Upper: up, Changes: changes})
	if err != nil {
		return // refusing the name is also safe
	}
	// The scratch objects are gone with Build; the patch shows the tree.
	for _, line := range strings.Split(string(c.Patch), "\n") {
		if line == "diff --git a/link b/link" {
			t.Fatalf("the name injected an index entry for %q:\n%s", "link", c.Patch)
		}
	}
}

// TestBuildQuotedGitattributesDriverFound: git C-quotes a name with a
// non-ASCII byte or a tab in the "+++ " line, so a .gitattributes below
// such a directory must still be recognised and its filter driver found.
func TestBuildQuotedGitattributesDriverFound(t *testing.T) {
	repo, base := newRepo(t, map[string]string{"main.go": "package main\n"})
	for _, dir := range []string{"d\u00edr", "tab\tdir"} {
		t.Run(dir, func(t *testing.T) {
			up := t.TempDir()
			p := dir + "/.gitattributes"
			writeFile(t, up, p, "* filter=evil\n")
			c := buildAdded(t, repo, base, up, p)
			got := findingKeys(c)
			if want := RuleAttributes + " " + p; !slices.Contains(got, want) {
				t.Errorf("findings = %q, want %q\n%s", got, want, c.Patch)
			}
		})
	}
}

// TestScanPatchContentLikeHeader: an added line whose content begins
// "++ " shows as "+++ …" in the patch; it must not be read as a file
// header (which moved the scan to another file and hid the driver line
// after it), nor skip the credential scan of that line.
func TestScanPatchContentLikeHeader(t *testing.T) {
	repo, base := newRepo(t, map[string]string{"main.go": "package main\n"})
	up := t.TempDir()
	writeFile(t, up, ".gitattributes", "++ b/notes.txt\n* filter=evil\n")
	writeFile(t, up, "notes.txt", "++ b/"+ghToken()+"\n")
	c := buildAdded(t, repo, base, up, ".gitattributes", "notes.txt")
	got := findingKeys(c)
	for _, want := range []string{RuleAttributes + " .gitattributes", RuleCredential + " notes.txt"} {
		if !slices.Contains(got, want) {
			t.Errorf("findings = %q, want %q\n%s", got, want, c.Patch)
		}
	}
}

// TestRenderNeutralisesTerminalControls: an untrusted body cannot act on
// the terminal that shows it (erase the line above, write the clipboard,
// overwrite or reorder a line); CRLF, tab and UTF-8 text stay readable.
func TestRenderNeutralisesTerminalControls(t *testing.T) {
	body := "+hook\n+\x1b[1A\x1b[2Kfine\n\x1b]52;c;cHduZWQ=\x07\nevil\rgood\r\nx\u202eyz\t\u00e9\xff\x9b\n"
	out := Render(Fenced{Job: "job_1", Profile: "candidate", Kind: "patch", Body: []byte(body)})
	for _, bad := range []string{"\x1b", "\x07", "evil\rgood", "\u202e", "\xff", "\x9b"} {
		if strings.Contains(out, bad) {
			t.Errorf("rendered block carries %q raw:\n%q", bad, out)
		}
	}
	for _, want := range []string{`+\x1b[1A\x1b[2Kfine`, `\x1b]52;c;cHduZWQ=\x07`, `evil\x0dgood` + "\r\n", `x\u202eyz` + "\t\u00e9" + `\xff\x9b`} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered block lacks %q:\n%q", want, out)
		}
	}
	if !strings.Contains(out, "sha256="+strings.TrimPrefix(Digest([]byte(body)), "sha256:")) {
		t.Errorf("digest is not of the raw body:\n%s", out)
	}
}

// TestScanChangeLinkIntoGitDir: a symbolic link into the git directory
// ("hooks" -> ".git/hooks") blocks like one leaving the workspace.
func TestScanChangeLinkIntoGitDir(t *testing.T) {
	for _, tc := range []struct{ path, target, want string }{
		{"hooks", ".git/hooks", RuleSymlinkEscape},
		{"sub/cfg", "../.GIT/config", RuleSymlinkEscape},
		{"sub/ok", "../docs/x", ""},
		{"ig", ".gitignore", ""},
	} {
		got := ""
		for _, f := range ScanChange(candidate.Change{Path: tc.path, Kind: candidate.Added, Mode: fs.ModeSymlink | 0o777, Target: tc.target}) {
			got = f.Rule
		}
		if got != tc.want {
			t.Errorf("%s -> %s: rule %q, want %q", tc.path, tc.target, got, tc.want)
		}
	}
}
