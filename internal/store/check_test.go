package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.db")
	db, err := Open(context.Background(), real, 0)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	tests := []struct {
		name    string
		path    string
		corrupt bool
	}{
		{"absent", filepath.Join(dir, "none.db"), false},
		{"empty", write("empty.db", ""), false},
		{"real database", real, false},
		{"text", write("text.db", strings.Repeat("not a database ", 50)), true},
		{"bad page size", write("page.db", "SQLite format 3\x00\x03\x00"+strings.Repeat("\x00", 90)), true},
		{"short", write("short.db", "SQLite"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckFile(tt.path)
			if got := errors.Is(err, ErrCorrupt); got != tt.corrupt {
				t.Fatalf("CheckFile = %v, corrupt %v want %v", err, got, tt.corrupt)
			}
		})
	}
}
