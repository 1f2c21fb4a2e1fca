package objstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// maxKeyLen is S3's limit on the length of an object key, in bytes.
const maxKeyLen = 1024

// ValidateKey reports whether key is an object key this package accepts. It
// returns an error wrapping [ErrInvalidKey] for an empty key, a key longer
// than 1024 bytes, invalid UTF-8, a control character (NUL included), a
// leading "/", or a "." or ".." segment between slashes. Spaces, "+", "%",
// unicode and every other printable character are accepted.
//
// The bundled store never uses the key as a file path (see pathFor), so these
// rules are defence in depth and keep keys portable to any S3 service.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case len(key) > maxKeyLen:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidKey, maxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidKey)
	case strings.HasPrefix(key, "/"):
		return fmt.Errorf("%w: %q starts with /", ErrInvalidKey, key)
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: %q contains a control character", ErrInvalidKey, key)
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("%w: %q has a %q segment", ErrInvalidKey, key, seg)
		}
	}
	return nil
}

// pathFor maps a valid key to the directory and file that hold its object:
// <root>/<h[0:2]>/<h> where h is the hex SHA-256 of the key. Hashing makes
// the mapping injective and safe for any key by construction: no traversal,
// no file/directory clash between "a" and "a/b", no per-segment length limit,
// no case folding. The key itself is kept in the file's header (see
// objectHeader), so an operator can still find an object with grep.
func pathFor(root, key string) (dir, file string) {
	sum := sha256.Sum256([]byte(key))
	name := hex.EncodeToString(sum[:])
	dir = filepath.Join(root, name[:2])
	return dir, filepath.Join(dir, name)
}

// encodePath is the SigV4 canonical URI of a decoded path: every byte
// outside A-Z a-z 0-9 - _ . ~ / is written as %XX with upper-case hex. S3
// encodes the path once (no double encoding) and keeps "/" as is.
func encodePath(p string) string {
	return uriEncode(p, false)
}

// uriEncode writes s with SigV4's URI encoding: unreserved characters kept,
// everything else as upper-case %XX; "/" is kept unless encodeSlash.
func uriEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
	}
	return b.String()
}
