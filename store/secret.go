package store

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Secret is a string that must never be printed: String and LogValue return
// "REDACTED", so passing one to slog or fmt cannot leak it.
type Secret string

// String returns "REDACTED".
func (Secret) String() string { return "REDACTED" }

// LogValue returns "REDACTED" for log/slog.
func (Secret) LogValue() slog.Value { return slog.StringValue("REDACTED") }

// Reveal returns the secret's value. Call it only where the value is sent to
// its rightful receiver (a provider API, the cipher).
func (s Secret) Reveal() string { return string(s) }

// sealVersion is the first byte of every sealed value; it names the scheme
// (AES-256-GCM, 12-byte random nonce) so the scheme can change later.
const sealVersion byte = 1

// Sealer encrypts and authenticates values at rest with AES-256-GCM. The
// associated data binds a sealed value to its row, so a ciphertext copied into
// another row does not open.
type Sealer struct {
	aead cipher.AEAD
	key  []byte
}

// KeySize is the length of the server secret in bytes.
const KeySize = 32

// NewSealer returns a Sealer for a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("new cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("new gcm: %w", err)
	}
	return &Sealer{aead: aead, key: append([]byte(nil), key...)}, nil
}

// Seal encrypts plaintext bound to ad: version byte, nonce, ciphertext+tag.
func (s *Sealer) Seal(plaintext []byte, ad string) []byte {
	out := make([]byte, 1+s.aead.NonceSize(), 1+s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	return s.aead.Seal(out, out[1:], plaintext, []byte(ad))
}

// Open decrypts a value made by Seal with the same ad.
func (s *Sealer) Open(sealed []byte, ad string) ([]byte, error) {
	ns := s.aead.NonceSize()
	if len(sealed) < 1+ns+s.aead.Overhead() || sealed[0] != sealVersion {
		return nil, errors.New("open sealed value: unknown format")
	}
	pt, err := s.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], []byte(ad))
	if err != nil {
		return nil, fmt.Errorf("open sealed value: %w", err)
	}
	return pt, nil
}

// Derive returns a 32-byte key for purpose, derived from the server secret
// with HMAC-SHA256, so webhook tokens, object-store credentials and sealing
// never share a key.
func (s *Sealer) Derive(purpose string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("outdial/" + purpose))
	return m.Sum(nil)
}

// LoadOrCreateKey returns the server secret: the base64 value of env when it is
// set (it must decode to 32 bytes), else the contents of path, which is created
// with 32 random bytes (mode 0600) when missing.
func LoadOrCreateKey(env, path string) ([]byte, error) {
	if env = strings.TrimSpace(env); env != "" {
		key, err := base64.StdEncoding.DecodeString(env)
		if err != nil {
			key, err = base64.RawURLEncoding.DecodeString(env)
		}
		if err != nil || len(key) != KeySize {
			return nil, fmt.Errorf("OUTDIAL_SECRET_KEY must be base64 of %d bytes", KeySize)
		}
		return key, nil
	}
	data, err := os.ReadFile(path)
	if err == nil {
		key, derr := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
		if derr != nil || len(key) != KeySize {
			return nil, fmt.Errorf("secret key file %s: must hold base64 of %d bytes", path, KeySize)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read secret key: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate secret key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create secret key: %w", err)
	}
	if _, err := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("write secret key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write secret key: %w", err)
	}
	return key, nil
}
