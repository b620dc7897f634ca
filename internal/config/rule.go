package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
)

// RuleLists are the governance.models list names, in the order they are
// written when created.
var RuleLists = []string{"allow", "ask", "deny"}

// SetModelRule puts id on governance.models.<list> (allow, ask or deny) of
// the config file at path and takes it off the other two lists, so the
// user's rule for id is exactly the one asked for: the terminal's
// `coagent8 governance allow|ask|deny MODEL` (issue 19 item 9). A calling
// agent has no way to reach it.
//
// It keeps every other key, unknown ones included, their order and
// values; only whitespace may change. The write is atomic (temp file +
// rename, same mode) under the same lock as [AddAllowedModel]; a missing
// file is created with mode 0600. It reports whether the file changed (an
// id already ruled that way, case-insensitively, leaves it untouched).
// Errors: INVALID_INPUT model.invalid or governance.list_invalid for bad
// arguments; a file that is not one plain JSON object (comments,
// duplicate keys, trailing data) or whose lists are not lists of strings
// is not edited, byte for byte: INVALID_INPUT [ReasonNotEditable] naming
// the file, the cause and the hand edit.
func SetModelRule(path, list, id string) (bool, error) {
	if !slices.Contains(RuleLists, list) {
		return false, fault.New(fault.InvalidInput, "governance.list_invalid",
			fmt.Sprintf("unknown rule %q: use allow, ask or deny", list))
	}
	if !policy.ValidID(id) {
		return false, fault.New(fault.InvalidInput, "model.invalid",
			fmt.Sprintf("model id %q is not valid (letters, digits and . _ : / [ ] -, at most 128)", clipID(id)))
	}
	target, err := resolve(path)
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return false, fmt.Errorf("create config directory: %w", err)
	}
	unlock, err := lockFile(target + ".lock")
	if err != nil {
		return false, fmt.Errorf("lock config: %w", err)
	}
	defer unlock()
	b, mode, err := readForEdit(target)
	if err != nil {
		return false, err
	}
	out, changed, err := withRule(b, list, id)
	if err != nil {
		return false, notEditable(target, list, err)
	}
	if !changed {
		return false, nil
	}
	return true, writeAtomic(target, out, mode)
}

// ReasonNotEditable is the reason of an edit refused because the config
// file is not one plain JSON object coagent8 can rewrite.
const ReasonNotEditable = "config.not_editable"

// notEditable is the INVALID_INPUT of a file SetModelRule cannot edit
// (comments, duplicate keys, trailing data, a list that is not strings):
// nothing was written, and the message names the file, the cause and the
// hand edit, since re-encoding would drop or reinterpret what the user
// wrote.
func notEditable(path, list string, err error) error {
	return fault.Wrap(fault.InvalidInput, ReasonNotEditable, fmt.Sprintf(
		"%s was not changed: coagent8 edits only a config file that is one plain JSON object (no comments, no duplicate keys) "+
			"with governance.models lists of strings, and this one is not (%v); fix that, or add the model to governance.models.%s "+
			"in the file by hand", path, err, list), err).With("path", path)
}

func clipID(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}

// withRule returns doc with id on list and off the other lists.
func withRule(doc []byte, list, id string) ([]byte, bool, error) {
	return editModels(doc, func(models object) (object, bool, error) {
		changed := false
		for _, name := range RuleLists {
			ids, present, err := modelList(models, name)
			if err != nil {
				return nil, false, err
			}
			next := slices.DeleteFunc(slices.Clone(ids), func(s string) bool { return strings.EqualFold(s, id) })
			if name == list {
				next = append(next, id)
				if len(ids) == len(next) && slices.ContainsFunc(ids, func(s string) bool { return strings.EqualFold(s, id) }) {
					next = ids // already there: keep its spelling and place
				}
			}
			if slices.Equal(next, ids) && (present || name != list) {
				continue
			}
			models, changed = models.set(name, mustJSON(orEmptyList(next))), true
		}
		return models, changed, nil
	})
}

// editModels applies edit to doc's governance.models object (creating
// the objects on the way, every other member kept in place) and returns
// the re-indented document and whether edit changed anything.
func editModels(doc []byte, edit func(object) (object, bool, error)) ([]byte, bool, error) {
	top, err := decodeObject(doc)
	if err != nil {
		return nil, false, fmt.Errorf("config: %w", err)
	}
	gov, err := top.object("governance")
	if err != nil {
		return nil, false, err
	}
	models, err := gov.object("models")
	if err != nil {
		return nil, false, fmt.Errorf("governance.%w", err)
	}
	models, changed, err := edit(models)
	if err != nil || !changed {
		return nil, false, err
	}
	gov = gov.set("models", models.encode())
	top = top.set("governance", gov.encode())
	var buf bytes.Buffer
	if err := json.Indent(&buf, top.encode(), "", "  "); err != nil {
		return nil, false, fmt.Errorf("config: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), true, nil
}

// modelList reads governance.models.<name>; absent is an empty list.
func modelList(models object, name string) ([]string, bool, error) {
	raw, ok := models.get(name)
	if !ok {
		return nil, false, nil
	}
	var ids []string
	if strictUnmarshal(raw, &ids) != nil || ids == nil {
		return nil, true, keyErr("governance.models."+name, "must be a list of model id strings")
	}
	return ids, true, nil
}

func orEmptyList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
