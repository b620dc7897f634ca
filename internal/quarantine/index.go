package quarantine

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"os"
	"strconv"
)

// indexBase is [baseFromIndex]; BenchmarkBuild swaps it for a refusal to
// time the rev-parse path (the build before issue 16's cut) in the same run.
var indexBase = baseFromIndex

// baseFromIndex returns the root tree id recorded in the cache-tree
// ("TREE") extension of the git index file at path, and the hash of the
// repository's object format (SHA-1 or SHA-256, told by the index's
// trailing checksum, which it also verifies). `git read-tree <tree>`
// records the tree it read there. ok is false for anything this reader
// does not know for certain (no or bad checksum, unknown version or
// extension layout, an invalidated root): the caller then asks git.
// Index format: git's Documentation/gitformat-index.txt, versions 2–4.
func baseFromIndex(path string) (tree string, newHash func() hash.Hash, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, false
	}
	var body []byte
	n := 0
	for _, h := range []func() hash.Hash{sha1.New, sha256.New} {
		sz := h().Size()
		if len(data) < 12+sz {
			continue
		}
		sum := h()
		sum.Write(data[:len(data)-sz])
		if bytes.Equal(sum.Sum(nil), data[len(data)-sz:]) {
			body, newHash, n = data[:len(data)-sz], h, sz
			break
		}
	}
	if body == nil || string(body[:4]) != "DIRC" {
		return "", nil, false
	}
	ver := binary.BigEndian.Uint32(body[4:])
	if ver < 2 || ver > 4 {
		return "", nil, false
	}
	count := int(binary.BigEndian.Uint32(body[8:]))
	off := 12
	for range count {
		start := off
		fixed := 40 + n + 2 // stat data, object id, flags
		if off+fixed > len(body) {
			return "", nil, false
		}
		flags := binary.BigEndian.Uint16(body[off+40+n:])
		if flags&0x4000 != 0 { // extended flags (version 3 and later)
			if ver < 3 {
				return "", nil, false
			}
			fixed += 2
		}
		off += fixed
		if ver == 4 {
			// A varint (bytes with the high bit set, then one without)
			// of prefix bytes to strip, then the NUL-terminated suffix;
			// no padding.
			for off < len(body) && body[off]&0x80 != 0 {
				off++
			}
			off++
		}
		if off > len(body) {
			return "", nil, false
		}
		j := bytes.IndexByte(body[off:], 0)
		if j < 0 {
			return "", nil, false
		}
		if ver == 4 {
			off += j + 1
		} else {
			// 1–8 NULs pad the entry to a multiple of 8 bytes.
			off = start + (fixed+j+8)&^7
		}
	}
	for off+8 <= len(body) {
		sig, size := string(body[off:off+4]), int(binary.BigEndian.Uint32(body[off+4:]))
		off += 8
		if size < 0 || off+size > len(body) {
			return "", nil, false
		}
		if sig == "TREE" {
			return rootTree(body[off:off+size], n, newHash)
		}
		off += size
	}
	return "", nil, false
}

// rootTree reads the first cache-tree entry, the root: an empty path,
// NUL, "<entry count> <subtree count>\n", then the tree id (absent when
// the entry count is -1: invalidated).
func rootTree(ext []byte, n int, newHash func() hash.Hash) (string, func() hash.Hash, bool) {
	if len(ext) == 0 || ext[0] != 0 {
		return "", nil, false
	}
	nl := bytes.IndexByte(ext, '\n')
	if nl < 0 {
		return "", nil, false
	}
	counts := bytes.Fields(ext[1:nl])
	if len(counts) != 2 {
		return "", nil, false
	}
	if entries, err := strconv.Atoi(string(counts[0])); err != nil || entries < 0 {
		return "", nil, false
	}
	if len(ext) < nl+1+n {
		return "", nil, false
	}
	return hex.EncodeToString(ext[nl+1 : nl+1+n]), newHash, true
}
