package auth

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

var phcRE = regexp.MustCompile(`^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`)

func TestHashPasswordFormat(t *testing.T) {
	h1, err := HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatalf("HashPassword: %v", err)
	}
	if !phcRE.MatchString(h1) {
		t.Fatalf("hash = %q, want the PHC form %s", h1, phcRE)
	}
	h2, err := HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatalf("HashPassword: %v", err)
	}
	if h1 == h2 {
		t.Fatalf("two hashes of one password are equal (%q): the salt is not random", h1)
	}
	if strings.Contains(h1, "horse") {
		t.Fatalf("hash %q contains the password", h1)
	}
	if NeedsRehash(h1) {
		t.Fatalf("NeedsRehash(fresh hash) = true, want false")
	}
}

func TestHashParamsAtLeastOWASP(t *testing.T) {
	if HashParams.Memory < 19456 || HashParams.Time < 2 || HashParams.Threads < 1 {
		t.Fatalf("HashParams = %+v, want at least m=19456 KiB, t=2, p=1 (API.md 17)", HashParams)
	}
}

func TestVerifyPassword(t *testing.T) {
	const pw = "correct horse battery staple"
	h, err := HashPassword(pw)
	if err != nil {
		t.Fatalf("HashPassword: %v", err)
	}
	tests := []struct {
		name string
		pw   string
		want bool
	}{
		{"right", pw, true},
		{"wrong", "correct horse battery stapler", false},
		{"other case", strings.ToUpper(pw), false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := VerifyPassword(h, tt.pw)
			if err != nil {
				t.Fatalf("VerifyPassword: %v", err)
			}
			if ok != tt.want {
				t.Fatalf("VerifyPassword(%q) = %v, want %v", tt.pw, ok, tt.want)
			}
		})
	}
}

// A hash made at other parameters still verifies: they come from the string.
func TestVerifyPasswordReadsParameters(t *testing.T) {
	// Made by this package at other parameters (as an older release would
	// have), then checked at the current ones.
	saved := HashParams
	HashParams = Argon2Params{Memory: 8 * 1024, Time: 3, Threads: 2}
	h, err := HashPassword("an older hash at other params")
	HashParams = saved
	if err != nil {
		t.Fatalf("HashPassword: %v", err)
	}
	if !strings.Contains(h, "$m=8192,t=3,p=2$") {
		t.Fatalf("hash %q does not carry its parameters", h)
	}
	ok, err := VerifyPassword(h, "an older hash at other params")
	if err != nil || !ok {
		t.Fatalf("VerifyPassword = %v, %v, want true, nil", ok, err)
	}
	if !NeedsRehash(h) {
		t.Fatalf("NeedsRehash(%q) = false, want true", h)
	}
}

// A hash from another implementation: a test vector of the reference
// implementation (github.com/P-H-C/phc-winner-argon2, src/test.c), password
// "password", salt "somesalt", m=65536 KiB, t=2, p=1, a 32-byte key.
func TestVerifyPasswordKnownVector(t *testing.T) {
	const h = "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc"
	ok, err := VerifyPassword(h, "password")
	if err != nil || !ok {
		t.Fatalf("VerifyPassword(reference vector) = %v, %v, want true, nil", ok, err)
	}
}

func TestVerifyPasswordMalformed(t *testing.T) {
	salt := "c29tZXNhbHRzb21lc2FsdA"                     // 16 bytes
	key := "CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc" // 32 bytes
	tests := []struct {
		name, h string
	}{
		{"empty", ""},
		{"bcrypt", "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"},
		{"argon2i", "$argon2i$v=19$m=19456,t=2,p=1$" + salt + "$" + key},
		{"version 16", "$argon2id$v=16$m=19456,t=2,p=1$" + salt + "$" + key},
		{"no version", "$argon2id$m=19456,t=2,p=1$" + salt + "$" + key},
		{"missing p", "$argon2id$v=19$m=19456,t=2$" + salt + "$" + key},
		{"repeated m", "$argon2id$v=19$m=19456,m=1,t=2,p=1$" + salt + "$" + key},
		{"unknown param", "$argon2id$v=19$m=19456,t=2,p=1,x=3$" + salt + "$" + key},
		{"t=0", "$argon2id$v=19$m=19456,t=0,p=1$" + salt + "$" + key},
		{"p=0", "$argon2id$v=19$m=19456,t=2,p=0$" + salt + "$" + key},
		{"p=256", "$argon2id$v=19$m=19456,t=2,p=256$" + salt + "$" + key},
		{"m below 8p", "$argon2id$v=19$m=7,t=2,p=1$" + salt + "$" + key},
		{"m 4 GiB", "$argon2id$v=19$m=4194304,t=2,p=1$" + salt + "$" + key},
		{"t huge", "$argon2id$v=19$m=19456,t=100000,p=1$" + salt + "$" + key},
		{"negative", "$argon2id$v=19$m=-1,t=2,p=1$" + salt + "$" + key},
		{"padded salt", "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "==$" + key},
		{"short salt", "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$" + key},
		{"short key", "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$a2V5a2V5"},
		{"bad base64", "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + key[:40] + "!!!"},
		{"extra field", "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + key + "$"},
		{"no leading $", "argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + key},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := VerifyPassword(tt.h, "password")
			if ok || !errors.Is(err, ErrMalformedHash) {
				t.Fatalf("VerifyPassword(%q) = %v, %v, want false, ErrMalformedHash", tt.h, ok, err)
			}
			if !NeedsRehash(tt.h) {
				t.Fatalf("NeedsRehash(%q) = false, want true", tt.h)
			}
		})
	}
}

// VerifyDummy must cost what a real verification costs (API.md 17: an
// unknown email answers in the same time as a wrong password, ±20 %).
// Timed by the fastest of several interleaved runs each, the figure least
// disturbed by other work on a shared machine, and tried up to three times
// before failing; the memory each allocates (argon2id's m) is checked too,
// which does not depend on the machine's load.
func TestVerifyDummyTakesAsLong(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	h, err := HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatalf("HashPassword: %v", err)
	}
	realAlloc := allocated(func() { _, _ = VerifyPassword(h, "wrong horse battery staple") })
	dummyAlloc := allocated(func() { VerifyDummy("wrong horse battery staple") })
	if ratio := float64(dummyAlloc) / float64(realAlloc); ratio < 0.99 || ratio > 1.01 {
		t.Fatalf("VerifyDummy allocates %d bytes, VerifyPassword %d", dummyAlloc, realAlloc)
	}
	var ratio float64
	for range 3 {
		const runs = 7
		real, dummy := time.Duration(1<<62), time.Duration(1<<62)
		for i := range runs {
			// Alternate which goes first: the first of a pair tends to pay
			// for collecting the previous one's 19 MiB.
			timeReal := func() {
				start := time.Now()
				if ok, err := VerifyPassword(h, "wrong horse battery staple"); ok || err != nil {
					t.Fatalf("VerifyPassword(wrong) = %v, %v", ok, err)
				}
				real = min(real, time.Since(start))
			}
			timeDummy := func() {
				start := time.Now()
				VerifyDummy("wrong horse battery staple")
				dummy = min(dummy, time.Since(start))
			}
			if i%2 == 0 {
				timeReal()
				timeDummy()
			} else {
				timeDummy()
				timeReal()
			}
		}
		ratio = float64(dummy) / float64(real)
		t.Logf("fastest VerifyDummy %v, VerifyPassword %v: ratio %.2f", dummy, real, ratio)
		if ratio >= 0.8 && ratio <= 1.2 {
			return
		}
	}
	t.Fatalf("VerifyDummy against VerifyPassword: ratio %.2f, want within 20 %%", ratio)
}

// allocated is the number of bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func BenchmarkHashPassword(b *testing.B) {
	b.ReportMetric(float64(HashParams.Memory), "KiB")
	for b.Loop() {
		if _, err := HashPassword("correct horse battery staple"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyPassword(b *testing.B) {
	h, err := HashPassword("correct horse battery staple")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := VerifyPassword(h, "wrong horse battery staple"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyDummy(b *testing.B) {
	for b.Loop() {
		VerifyDummy("wrong horse battery staple")
	}
}

func ExampleHashPassword() {
	h, _ := HashPassword("correct horse battery staple")
	ok, _ := VerifyPassword(h, "correct horse battery staple")
	fmt.Println(h[:31], ok)
	// Output: $argon2id$v=19$m=19456,t=2,p=1$ true
}
