package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// sqliteMagic starts every SQLite 3 database file (sqlite.org/fileformat).
var sqliteMagic = []byte("SQLite format 3\x00")

// CheckFile reports, without opening a database engine, whether path is
// absent, empty (a fresh database) or starts like an SQLite 3 database
// with a valid page size. It catches a file that is not a database at all
// before anything else runs; [Open]'s integrity check catches the rest.
// The file is only read.
func CheckFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check database %s: %w", path, err)
	}
	defer f.Close()
	hdr := make([]byte, 100)
	n, err := io.ReadFull(f, hdr)
	if n == 0 {
		return nil
	}
	if err != nil || !bytes.Equal(hdr[:16], sqliteMagic) || !validPageSize(int(hdr[16])<<8|int(hdr[17])) {
		return fmt.Errorf("check database %s: %w: not an SQLite 3 database (the file was left untouched)", path, ErrCorrupt)
	}
	return nil
}

// validPageSize: a power of two from 512 to 32768, or 1 meaning 65536.
func validPageSize(n int) bool {
	return n == 1 || (n >= 512 && n <= 32768 && n&(n-1) == 0)
}
