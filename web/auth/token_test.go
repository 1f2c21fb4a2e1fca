package auth

import (
	"bytes"
	"encoding/base64"
	"testing"
)

func TestNewToken(t *testing.T) {
	tok, hash := NewToken()
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatalf("token %q is not unpadded base64url: %v", tok, err)
	}
	if len(raw) != 32 || len(tok) != 43 {
		t.Fatalf("token has %d bytes in %d characters, want 32 in 43", len(raw), len(tok))
	}
	if !bytes.Equal(hash, HashToken(tok)) {
		t.Fatalf("hash is not HashToken(token)")
	}
	other, otherHash := NewToken()
	if other == tok || bytes.Equal(hash, otherHash) {
		t.Fatalf("two tokens alike: %q", tok)
	}
	if bytes.Equal(HashToken(tok), HashToken(tok+"x")) || bytes.Equal(HashToken(tok), HashToken(" "+tok)) {
		t.Fatalf("HashToken normalizes: a different token hashes alike")
	}
}
