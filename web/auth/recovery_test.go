package auth

import (
	"bytes"
	"crypto/sha256"
	"regexp"
	"testing"
)

var recoveryRE = regexp.MustCompile(`^[abcdefghjkmnpqrstuvwxyz23456789]{4}-[abcdefghjkmnpqrstuvwxyz23456789]{4}$`)

func TestNewRecoveryCodes(t *testing.T) {
	codes, hashes := NewRecoveryCodes()
	if len(codes) != 10 || len(hashes) != 10 {
		t.Fatalf("got %d codes and %d hashes, want 10 and 10", len(codes), len(hashes))
	}
	seen := map[string]bool{}
	for i, c := range codes {
		if !recoveryRE.MatchString(c) {
			t.Fatalf("code %d = %q, want xxxx-xxxx of unambiguous lower-case letters and digits", i, c)
		}
		if seen[c] {
			t.Fatalf("code %q twice", c)
		}
		seen[c] = true
		if !bytes.Equal(hashes[i], HashRecoveryCode(c)) {
			t.Fatalf("hash %d is not HashRecoveryCode(code %d)", i, i)
		}
	}
	again, _ := NewRecoveryCodes()
	for _, c := range again {
		if seen[c] {
			t.Fatalf("code %q in two sets", c)
		}
	}
}

func TestHashRecoveryCode(t *testing.T) {
	want := sha256.Sum256([]byte("abcd2345"))
	tests := []struct {
		name, typed string
		same        bool
	}{
		{"as shown", "abcd-2345", true},
		{"without the dash", "abcd2345", true},
		{"upper case", "ABCD-2345", true},
		{"mixed case, no dash", "AbCd2345", true},
		{"spaces around", "  abcd-2345\n", true},
		{"a space for the dash", "abcd 2345", true},
		{"two dashes", "ab-cd-23-45", true},
		{"a wrong character", "abce-2345", false},
		{"one short", "abcd-234", false},
		{"one long", "abcd-23456", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := HashRecoveryCode(tt.typed)
			if len(got) != sha256.Size {
				t.Fatalf("hash has %d bytes, want %d", len(got), sha256.Size)
			}
			if same := bytes.Equal(got, want[:]); same != tt.same {
				t.Fatalf("HashRecoveryCode(%q) equal to that of abcd-2345: %v, want %v", tt.typed, same, tt.same)
			}
		})
	}
}

// Every character of the alphabet comes up, and none outside it, over
// enough draws (31 characters, 8,000 draws: each is missed with odds of
// about e^-258).
func TestRandomStringAlphabet(t *testing.T) {
	s := randomString(8000, recoveryAlphabet)
	count := map[rune]int{}
	for _, r := range s {
		count[r]++
	}
	if len(s) != 8000 || len(count) != len(recoveryAlphabet) {
		t.Fatalf("%d characters, %d distinct, want 8000 and %d", len(s), len(count), len(recoveryAlphabet))
	}
}
