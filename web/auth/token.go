package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// TokenBytes is the number of random bytes in a token of NewToken.
const TokenBytes = 32

// NewToken makes a token for a one-time link (a set-password link, or a
// session cookie): 32 random bytes from crypto/rand as unpadded base64url
// (43 characters, safe in a URL query), and its HashToken hash. Give the
// token to the user and store only the hash, so a copy of the database
// opens no link.
func NewToken() (token string, hash []byte) {
	b := make([]byte, TokenBytes)
	if _, err := rand.Read(b); err != nil {
		panic("auth: crypto/rand: " + err.Error())
	}
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token)
}

// HashToken is the SHA-256 of a token as it was handed out (no
// normalization: tokens are copied, not typed), for looking it up.
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}
