package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"strings"
)

// RecoveryCodeCount is how many recovery codes NewRecoveryCodes makes.
const RecoveryCodeCount = 10

// recoveryAlphabet is the characters of a recovery code: lower-case letters
// and digits without the ones read alike (0 o, 1 l i). 31 characters, so a
// code's eight carry about 39.6 bits.
const recoveryAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// NewRecoveryCodes makes RecoveryCodeCount distinct recovery codes of the
// form `xxxx-xxxx` from crypto/rand, to be shown to the user once, and
// their HashRecoveryCode hashes, in the same order, to be stored. It panics
// only if the system's random source fails (crypto/rand.Read never returns
// an error on the systems Go supports).
func NewRecoveryCodes() (codes []string, hashes [][]byte) {
	seen := make(map[string]bool, RecoveryCodeCount)
	for len(codes) < RecoveryCodeCount {
		c := randomString(8, recoveryAlphabet)
		code := c[:4] + "-" + c[4:]
		if seen[code] {
			continue
		}
		seen[code] = true
		codes = append(codes, code)
		hashes = append(hashes, HashRecoveryCode(code))
	}
	return codes, hashes
}

// HashRecoveryCode is the SHA-256 of a recovery code as a user may type
// it, normalized: spaces around it and dashes and spaces within it are
// dropped, letters are lower-cased ("ABCD-EFGH", " abcdefgh " and
// "abcd efgh" hash alike). Store it and look a typed code up by it; a
// plain hash is enough for random codes of this length that each work
// once after a password.
func HashRecoveryCode(code string) []byte {
	norm := strings.Map(func(r rune) rune {
		switch r {
		case '-', ' ', '\t', '\n', '\r':
			return -1
		}
		return r
	}, strings.ToLower(code))
	sum := sha256.Sum256([]byte(norm))
	return sum[:]
}

// randomString returns n characters of alphabet (at most 256 of them)
// chosen uniformly with crypto/rand, by rejecting bytes past the largest
// multiple of the alphabet's length.
func randomString(n int, alphabet string) string {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, n+8)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			panic("auth: crypto/rand: " + err.Error())
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out)
}
