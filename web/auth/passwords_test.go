package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckPassword(t *testing.T) {
	tests := []struct {
		name string
		pw   string
		want error
	}{
		{"empty", "", ErrPasswordTooShort},
		{"14 characters", strings.Repeat("k", 14), ErrPasswordTooShort},
		{"15 characters", "correct horse b", nil},
		{"128 characters", strings.Repeat("horse battery ", 9) + "st", nil},
		{"129 characters", strings.Repeat("horse battery ", 9) + "sta", ErrPasswordTooLong},
		// Characters, not bytes: 14 two-byte runes are 28 bytes and too
		// short; 15 three-byte runes are 45 bytes and long enough; 128
		// four-byte runes are 512 bytes and allowed.
		{"14 two-byte runes", strings.Repeat("é", 14), ErrPasswordTooShort},
		{"15 three-byte runes", strings.Repeat("密", 15), nil},
		{"128 four-byte runes", strings.Repeat("🐴", 128), nil},
		{"129 four-byte runes", strings.Repeat("🐴", 129), ErrPasswordTooLong},
		{"mixed runes, 15", "pâté-密码-🐴🐴-horsé", nil},
		// On the list (each at least 15 characters), in any case.
		{"common", "qazwsxedcrfvtgb", ErrPasswordCommon},
		{"common upper case", "QAZWSXEDCRFVTGB", ErrPasswordCommon},
		{"common mixed case", "1QaZ2wSx3EdC4rFv", ErrPasswordCommon},
		{"common digits", "123456789987654321", ErrPasswordCommon},
		{"common with a suffix", "qazwsxedcrfvtgb!", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckPassword(tt.pw); !errors.Is(got, tt.want) {
				t.Fatalf("CheckPassword(%q) = %v, want %v", tt.pw, got, tt.want)
			}
		})
	}
}

func TestCommonPasswordList(t *testing.T) {
	list := commonPasswords()
	if len(list) < 10000 {
		t.Fatalf("list has %d passwords, want at least 10,000", len(list))
	}
	// The most common passwords of every published list, and some from
	// further down this one.
	for _, pw := range []string{"123456", "password", "12345678", "qwerty", "letmein", "trustno1", "iloveyou", "xpcrew", "Password", "PASSWORD"} {
		if !isCommonPassword(pw) {
			t.Errorf("isCommonPassword(%q) = false, want true", pw)
		}
	}
	for _, pw := range []string{"", "correct horse battery staple", "xpcrew!"} {
		if isCommonPassword(pw) {
			t.Errorf("isCommonPassword(%q) = true, want false", pw)
		}
	}
	for i, pw := range list {
		if pw != strings.ToLower(pw) {
			t.Fatalf("list entry %d %q is not lower case (lookups lower-case the password)", i, pw)
		}
		if i > 0 && list[i-1] >= pw {
			t.Fatalf("list entries %d and %d (%q, %q) not sorted and distinct", i-1, i, list[i-1], pw)
		}
	}
}

// The user-facing messages are part of the contract with the console.
func TestPasswordErrorMessages(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{ErrPasswordTooShort, "password must be at least 15 characters"},
		{ErrPasswordTooLong, "password must be at most 128 characters"},
		{ErrPasswordCommon, "password is too common (it is on a list of breached passwords)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("message = %q, want %q", got, tt.want)
		}
	}
}

func BenchmarkCheckPassword(b *testing.B) {
	commonPasswords()
	for b.Loop() {
		_ = CheckPassword("Qazwsxedcrfvtgb")
	}
}

// The cost of the first CheckPassword after start-up.
func BenchmarkLoadCommonPasswords(b *testing.B) {
	for b.Loop() {
		_ = loadCommonPasswords()
	}
}
