package auth

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Password length bounds, counted in characters (Unicode code points, so
// "é" or "密" is one), as NIST SP 800-63B-4 counts them for a password that
// is the only factor.
const (
	MinPasswordLength = 15
	MaxPasswordLength = 128
)

// Errors of CheckPassword. Their messages are written for the person
// choosing the password: a caller may show them as they are.
var (
	ErrPasswordTooShort = errors.New("password must be at least 15 characters")
	ErrPasswordTooLong  = errors.New("password must be at most 128 characters")
	ErrPasswordCommon   = errors.New("password is too common (it is on a list of breached passwords)")
)

// commonPasswordsGz is the list of common and breached passwords refused by
// CheckPassword: the 47,023 passwords of zxcvbn's data/passwords.txt (Dropbox's
// zxcvbn v4.4.2 as ported by github.com/trustelem/zxcvbn v1.0.1, MIT licence),
// the most frequent passwords of Mark Burnett's ten-million-password corpus
// (Xato, released into the public domain), ranked by frequency, lower case.
// That includes the 10,000 most common. Stored as one password a line,
// sorted bytewise and deduplicated, gzip'd; rebuilt with
//
//	awk '{print $1}' data/passwords.txt | LC_ALL=C sort -u | gzip -9n > common_passwords.txt.gz
//
//go:embed common_passwords.txt.gz
var commonPasswordsGz []byte

// commonPasswords decompresses the list the first time a password is
// checked (5 to 10 ms, mostly gunzip; 1.2 MB held afterwards) and never
// again. The list is sorted, so a lookup is a binary search.
var commonPasswords = sync.OnceValue(loadCommonPasswords)

// loadCommonPasswords decompresses the embedded list into one string and
// cuts it into lines that share that string's memory.
func loadCommonPasswords() []string {
	zr, err := gzip.NewReader(bytes.NewReader(commonPasswordsGz))
	if err != nil {
		panic("auth: embedded password list: " + err.Error())
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		panic("auth: embedded password list: " + err.Error())
	}
	list := strings.Split(strings.TrimSpace(string(data)), "\n")
	// The file is sorted when built; checking costs little and keeps the
	// binary search right should someone rebuild it unsorted.
	if !slices.IsSorted(list) {
		slices.Sort(list)
	}
	return list
}

// CheckPassword applies the password policy of API.md section 17 to a
// password someone chooses: at least MinPasswordLength and at most
// MaxPasswordLength characters (code points; an invalid UTF-8 byte counts
// as one), and not on the embedded list of common and breached passwords,
// compared case-insensitively. It returns nil, ErrPasswordTooShort,
// ErrPasswordTooLong or ErrPasswordCommon. The password is never kept,
// logged or put into the error.
func CheckPassword(pw string) error {
	n := utf8.RuneCountInString(pw)
	switch {
	case n < MinPasswordLength:
		return ErrPasswordTooShort
	case n > MaxPasswordLength:
		return ErrPasswordTooLong
	}
	if isCommonPassword(pw) {
		return ErrPasswordCommon
	}
	return nil
}

// isCommonPassword reports whether pw, lower-cased, is on the embedded list.
func isCommonPassword(pw string) bool {
	_, found := slices.BinarySearch(commonPasswords(), strings.ToLower(pw))
	return found
}
