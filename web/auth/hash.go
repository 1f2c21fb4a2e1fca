package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2Params are the cost parameters of an argon2id hash, as written in
// its PHC string (`m=<Memory>,t=<Time>,p=<Threads>`).
type Argon2Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes
	Threads uint8  // lanes
}

// HashParams are the parameters HashPassword uses for new hashes:
// OWASP's argon2id recommendation (Password Storage Cheat Sheet), 19 MiB,
// two passes, one lane, which API.md 17 sets as the floor. Each hash is
// stored with its own parameters, so raising these later changes only new
// hashes; VerifyPassword reads the parameters from the hash it checks.
// Set it only at start-up, before any hashing: it is not guarded.
var HashParams = Argon2Params{Memory: 19 * 1024, Time: 2, Threads: 1}

// Sizes of the salt and of the derived key, in bytes.
const (
	saltLength = 16
	keyLength  = 32
)

// Bounds on the parameters VerifyPassword accepts from a stored hash, so a
// corrupted or hostile string cannot make a sign-in allocate gigabytes or
// run for minutes.
const (
	maxMemory  = 1 << 21 // KiB: 2 GiB
	maxTime    = 64
	minKeyLen  = 16
	maxKeyLen  = 128
	minSaltLen = 8
	maxSaltLen = 64
)

// ErrMalformedHash is returned (wrapped) by VerifyPassword for a string that
// is not an argon2id PHC string this package can check.
var ErrMalformedHash = errors.New("malformed argon2id hash")

// b64 is the PHC string format's base64: standard alphabet, no padding.
var b64 = base64.RawStdEncoding

// HashPassword hashes pw with argon2id at HashParams, a fresh random 16-byte
// salt and a 32-byte key, and returns the PHC string
// `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>` (salt and key in unpadded
// standard base64). It does not check the policy: call CheckPassword first.
// The only error is the system's random source failing.
func HashPassword(pw string) (string, error) {
	salt := make([]byte, saltLength)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: salt: %w", err)
	}
	p := HashParams
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, keyLength)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// VerifyPassword reports whether pw is the password hashed in encoded, a
// string from HashPassword (or any argon2id PHC string of version 19 within
// sane bounds: the parameters, salt and key length are taken from it). The
// keys are compared in constant time. A wrong password is (false, nil); a
// string it cannot check is (false, an error wrapping ErrMalformedHash),
// which callers should treat as a server fault, not as a wrong password.
func VerifyPassword(encoded, pw string) (bool, error) {
	p, salt, want, err := parseHash(encoded)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummySalt and dummyKey stand in for a stored hash in VerifyDummy.
var (
	dummySalt = make([]byte, saltLength)
	dummyKey  = make([]byte, keyLength)
)

// VerifyDummy does the work of VerifyPassword against a hash made with the
// current HashParams, and always fails: call it for a sign-in with an
// unknown email so that it takes as long as a wrong password for a known
// one (API.md 17: the same answer in the same time). It matches the cost of
// a stored hash made at the current parameters; hashes stored at older,
// lower ones verify faster until they are rehashed.
func VerifyDummy(pw string) {
	p := HashParams
	got := argon2.IDKey([]byte(pw), dummySalt, p.Time, p.Memory, p.Threads, keyLength)
	subtle.ConstantTimeCompare(got, dummyKey)
}

// NeedsRehash reports whether encoded was made with parameters other than
// the current HashParams (or cannot be read), so that a caller who has just
// verified the password may store HashPassword's new hash of it.
func NeedsRehash(encoded string) bool {
	p, salt, key, err := parseHash(encoded)
	return err != nil || p != HashParams || len(salt) != saltLength || len(key) != keyLength
}

// parseHash splits an argon2id PHC string into its parameters, salt and key.
func parseHash(encoded string) (Argon2Params, []byte, []byte, error) {
	var p Argon2Params
	fail := func(why string) (Argon2Params, []byte, []byte, error) {
		return p, nil, nil, fmt.Errorf("%w: %s", ErrMalformedHash, why)
	}
	// "", "argon2id", "v=19", "m=…,t=…,p=…", salt, key
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" {
		return fail("not a PHC string")
	}
	if parts[1] != "argon2id" {
		return fail("algorithm is not argon2id")
	}
	if parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return fail("version is not 19")
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(parts[3], ",") {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || seen[name] {
			return fail("bad parameters")
		}
		seen[name] = true
		n, err := strconv.ParseUint(val, 10, 32)
		if err != nil {
			return fail("bad parameter " + name)
		}
		switch name {
		case "m":
			p.Memory = uint32(n)
		case "t":
			p.Time = uint32(n)
		case "p":
			if n > 255 {
				return fail("parallelism out of range")
			}
			p.Threads = uint8(n)
		default:
			return fail("unknown parameter " + name)
		}
	}
	if !seen["m"] || !seen["t"] || !seen["p"] {
		return fail("missing parameter")
	}
	if p.Threads < 1 || p.Time < 1 || p.Time > maxTime ||
		p.Memory < 8*uint32(p.Threads) || p.Memory > maxMemory {
		return fail("parameters out of range")
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < minSaltLen || len(salt) > maxSaltLen {
		return fail("bad salt")
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) < minKeyLen || len(key) > maxKeyLen {
		return fail("bad key")
	}
	return p, salt, key, nil
}
