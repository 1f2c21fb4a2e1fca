package objstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateKey(t *testing.T) {
	cases := []struct {
		key string
		ok  bool
	}{
		{"campaigns/3/0b6f_contacts.csv", true},
		{"with space.csv", true},
		{"ünïcødé/ファイル.csv", true},
		{"plus+sign.csv", true},
		{"a..b/c...d/.hidden/x.", true},
		{`back\slash\..\x`, true},
		{"trailing/", true},
		{"a//b", true},
		{strings.Repeat("k", maxKeyLen), true},
		{"", false},
		{strings.Repeat("k", maxKeyLen+1), false},
		{"/etc/passwd", false},
		{"..", false},
		{"../x", false},
		{"a/../b", false},
		{"a/..", false},
		{"./a", false},
		{"a/./b", false},
		{"nul\x00byte", false},
		{"new\nline", false},
		{"del\x7f", false},
		{"bad\xffutf8", false},
	}
	for _, tc := range cases {
		err := ValidateKey(tc.key)
		if tc.ok && err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", tc.key, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidateKey(%q) = %v, want ErrInvalidKey", tc.key, err)
		}
	}
}

// Whatever the key, its file is two levels below the root.
func TestPathForStaysUnderRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "objects")
	for _, key := range append(vectorKeys, "../../etc/passwd", "/abs", "a/b/c", "a", strings.Repeat("é", 500)) {
		dir, file := pathFor(root, key)
		rel, err := filepath.Rel(root, file)
		if err != nil || strings.Count(rel, string(filepath.Separator)) != 1 || strings.Contains(rel, "..") || filepath.Dir(file) != dir {
			t.Fatalf("pathFor(%q) = %q, %q", key, dir, file)
		}
	}
	if _, a := pathFor(root, "a"); a == func() string { _, b := pathFor(root, "a/b"); return b }() {
		t.Fatal("distinct keys share a file")
	}
}

func TestObjectFileCorruption(t *testing.T) {
	s := fileStore{root: t.TempDir()}
	if _, err := s.put(putParams{key: "k", contentType: "text/csv", limit: 100, size: -1}, strings.NewReader("hello")); err != nil {
		t.Fatalf("put: %v", err)
	}
	obj, err := s.open("k")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	_ = obj.Close()
	if obj.hdr.Size != 5 || obj.hdr.ContentType != "text/csv" || obj.hdr.Key != "k" {
		t.Fatalf("header = %+v", obj.hdr)
	}

	_, file := pathFor(s.root, "k")
	if err := os.WriteFile(file, []byte("not an object"), 0o600); err != nil {
		t.Fatalf("write: %v", err)
	}
	if _, err := s.open("k"); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("open of a corrupt file = %v, want a corruption error", err)
	}
	if _, err := s.open("other"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open(other) = %v, want ErrNotFound", err)
	}
	if err := s.remove("other"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove(other) = %v, want ErrNotFound", err)
	}
}
