package quarantine

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBuildGitattributesDriverAsGitReadsIt: every .gitattributes whose
// driver line git honours is a blocking exec.gitattributes finding. Git
// reads the file line by line whatever bytes it holds (a NUL makes the
// patch binary, base85 lines the line scan never sees), and it reads a
// line as a comment only when '#' follows spaces, tabs or CRs: a
// form feed or a no-break space before it starts a pattern, which a file
// the agent names so matches. Each case is checked against git check-attr first.
func TestBuildGitattributesDriverAsGitReadsIt(t *testing.T) {
	for _, tc := range []struct {
		name, content, file string
	}{
		{"binary", "#\x00\n*.txt diff=evil\n", "a.txt"},
		{"binary filter", "\x00\x01\x02\n* filter=evil\n", "a.txt"},
		{"form feed before #", "\f# diff=evil\n", "\f#"},
		{"no-break space before #", "\u00a0# diff=evil\n", "\u00a0#"},
		{"vertical tab before #", "\v# merge=evil\n", "\v#"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			gitRun(t, dir, "init", "-q")
			writeFile(t, dir, ".gitattributes", tc.content)
			cmd := exec.Command("git", "check-attr", "-a", "--", tc.file)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil || !strings.Contains(string(out), ": evil") {
				t.Fatalf("git check-attr does not read the driver (the case proves nothing): %q %v", out, err)
			}

			repo, base := newRepo(t, map[string]string{"main.go": "package main\n"})
			up := t.TempDir()
			writeFile(t, up, "sub/.gitattributes", tc.content)
			writeFile(t, filepath.Join(up, "sub"), tc.file, "x\n")
			c := buildAdded(t, repo, base, up, "sub/.gitattributes", "sub/"+tc.file)
			got := findingKeys(c)
			if want := RuleAttributes + " sub/.gitattributes"; !slices.Contains(got, want) {
				t.Errorf("findings = %q, want %q\n%s", got, want, c.Patch)
			}
			if !Tainted(c.Findings) {
				t.Errorf("candidate not tainted: %q", got)
			}
		})
	}
}

// TestBuildCandidateAttributesDoNotShapePatch: the patch is rendered
// without the candidate's own attributes. A .gitattributes "* binary"
// made diff-tree (reading attributes from the scratch index, which holds
// the candidate's tree) write every file as a base85 binary patch: the
// line scan then saw no added line, so a credential and a driver line
// gave no finding, and the user reviewed base85 for every file.
func TestBuildCandidateAttributesDoNotShapePatch(t *testing.T) {
	repo, base := newRepo(t, map[string]string{"main.go": "package main\n"})
	for _, attrs := range []string{"* binary\n* filter=evil\n", "* -diff\n* merge=evil\n", "*.txt diff=evil\n[attr]x -diff\n* x\n"} {
		t.Run(attrs, func(t *testing.T) {
			up := t.TempDir()
			writeFile(t, up, ".gitattributes", attrs)
			writeFile(t, up, "notes.txt", "token "+ghToken()+"\n")
			c := buildAdded(t, repo, base, up, ".gitattributes", "notes.txt")
			got := findingKeys(c)
			for _, want := range []string{RuleAttributes + " .gitattributes", RuleCredential + " notes.txt"} {
				if !slices.Contains(got, want) {
					t.Errorf("findings = %q, want %q", got, want)
				}
			}
			if strings.Contains(string(c.Patch), "GIT binary patch") || !strings.Contains(string(c.Patch), "+token ") {
				t.Errorf("patch is not text:\n%s", c.Patch)
			}
		})
	}
}

// TestBuildCredentialInName: a credential is blocked wherever the agent
// writes it into what admission carries, its file and directory names
// included: a name sits in the patch's header lines, which the line scan
// skips, and a name reaches the checkout (and the next push) as surely
// as content does.
func TestBuildCredentialInName(t *testing.T) {
	repo, base := newRepo(t, map[string]string{"main.go": "package main\n"})
	for _, p := range []string{ghToken(), "notes/" + ghToken() + ".txt", "d/" + ghToken() + "/x"} {
		t.Run(p[:8], func(t *testing.T) {
			up := t.TempDir()
			writeFile(t, up, p, "harmless\n")
			c := buildAdded(t, repo, base, up, p)
			var got []string
			for _, f := range c.Findings {
				got = append(got, f.Rule)
				if strings.Contains(f.Message+f.Path, ghToken()) {
					t.Errorf("finding quotes the credential: %+v", f)
				}
			}
			if !slices.Contains(got, RuleCredential) || !Tainted(c.Findings) {
				t.Errorf("findings = %q, want a blocking %s", got, RuleCredential)
			}
		})
	}
}

// TestBuildGitattributesBelowSpacedName: git ends a "+++ " header with a
// tab when the name holds a space (for patch(1)), so a .gitattributes
// below "my dir" was read as ".gitattributes\t" and its driver line
// escaped the finding; the credential finding named the path with the
// tab.
func TestBuildGitattributesBelowSpacedName(t *testing.T) {
	repo, base := newRepo(t, map[string]string{"main.go": "package main\n"})
	for _, p := range []string{"my dir/.gitattributes", "a b/c d/.gitattributes"} {
		t.Run(p, func(t *testing.T) {
			up := t.TempDir()
			writeFile(t, up, p, "* filter=evil\nkey "+ghToken()+"\n")
			c := buildAdded(t, repo, base, up, p)
			got := findingKeys(c)
			for _, want := range []string{RuleAttributes + " " + p, RuleCredential + " " + p} {
				if !slices.Contains(got, want) {
					t.Errorf("findings = %q, want %q", got, want)
				}
			}
		})
	}
}
