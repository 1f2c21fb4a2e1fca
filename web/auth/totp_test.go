package auth

import (
	"bytes"
	"encoding/base32"
	"image/png"
	"net/url"
	"testing"
	"time"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/pquerna/otp/totp"
)

// rfcSecret is RFC 6238's SHA1 test key, "12345678901234567890", in base32.
const rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

func TestNewTOTPKey(t *testing.T) {
	secret, u, err := NewTOTPKey("ada+ops@example.com")
	if err != nil {
		t.Fatalf("NewTOTPKey: %v", err)
	}
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
	if err != nil {
		t.Fatalf("secret %q is not unpadded base32: %v", secret, err)
	}
	if len(raw) != 20 {
		t.Fatalf("secret has %d bytes, want 20", len(raw))
	}
	want := "otpauth://totp/Outdial:ada+ops@example.com?secret=" + secret + "&issuer=Outdial"
	if u != want {
		t.Fatalf("url = %q, want %q", u, want)
	}
	// What an authenticator app reads from it.
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatalf("url.Parse: %v", err)
	}
	if parsed.Scheme != "otpauth" || parsed.Host != "totp" || parsed.Path != "/Outdial:ada+ops@example.com" {
		t.Fatalf("parsed url = %s %s %s", parsed.Scheme, parsed.Host, parsed.Path)
	}
	if q := parsed.Query(); q.Get("secret") != secret || q.Get("issuer") != "Outdial" || len(q) != 2 {
		t.Fatalf("query = %v, want secret and issuer only", q)
	}
	other, _, err := NewTOTPKey("ada+ops@example.com")
	if err != nil {
		t.Fatalf("NewTOTPKey: %v", err)
	}
	if other == secret {
		t.Fatalf("two keys have the same secret %q", secret)
	}
	if _, _, err := NewTOTPKey(""); err == nil {
		t.Fatalf("NewTOTPKey(\"\") err = nil, want an error")
	}
}

func TestTOTPURLEscapesEmail(t *testing.T) {
	tests := []struct{ email, wantPath string }{
		{"ada@example.com", "Outdial:ada@example.com"},
		{"a b@example.com", "Outdial:a%20b@example.com"},
		{"a/b?c#d@example.com", "Outdial:a%2Fb%3Fc%23d@example.com"},
		{"jos\u00e9@example.com", "Outdial:jos%C3%A9@example.com"},
	}
	for _, tt := range tests {
		got := TOTPURL(tt.email, "ABC")
		want := "otpauth://totp/" + tt.wantPath + "?secret=ABC&issuer=Outdial"
		if got != want {
			t.Errorf("TOTPURL(%q) = %q, want %q", tt.email, got, want)
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("url.Parse(%q): %v", got, err)
		}
		if u.Path != "/Outdial:"+tt.email {
			t.Errorf("parsed path = %q, want %q", u.Path, "/Outdial:"+tt.email)
		}
	}
}

// RFC 6238 appendix B's SHA1 vectors, last six digits.
func TestMatchTOTPRFCVectors(t *testing.T) {
	tests := []struct {
		unix int64
		code string
	}{
		{59, "287082"},
		{1111111109, "081804"},
		{1111111111, "050471"},
		{1234567890, "005924"},
		{2000000000, "279037"},
	}
	for _, tt := range tests {
		now := time.Unix(tt.unix, 0)
		step, ok := MatchTOTP(rfcSecret, tt.code, now, 0)
		if !ok || step != tt.unix/30 {
			t.Errorf("MatchTOTP(%s at %d) = %d, %v, want %d, true", tt.code, tt.unix, step, ok, tt.unix/30)
		}
	}
}

func TestMatchTOTP(t *testing.T) {
	// A time in the middle of step s.
	const s int64 = 59_000_000
	now := time.Unix(s*30+13, 0)
	code := func(step int64) string {
		c, err := totp.GenerateCode(rfcSecret, time.Unix(step*30, 0))
		if err != nil {
			t.Fatalf("GenerateCode: %v", err)
		}
		return c
	}
	tests := []struct {
		name     string
		code     string
		lastStep int64
		wantStep int64
		wantOK   bool
	}{
		{"current step", code(s), 0, s, true},
		{"one step back", code(s - 1), 0, s - 1, true},
		{"one step ahead", code(s + 1), 0, s + 1, true},
		{"two steps back", code(s - 2), 0, 0, false},
		{"two steps ahead", code(s + 2), 0, 0, false},
		{"with spaces", code(s)[:3] + " " + code(s)[3:], 0, s, true},
		{"replayed: step already used", code(s), s, 0, false},
		{"an earlier step than one used", code(s - 1), s, 0, false},
		{"a later step than one used", code(s + 1), s, s + 1, true},
		{"previous step right after last use", code(s), s - 1, s, true},
		{"wrong code", wrongCode(code(s-1), code(s), code(s+1)), 0, 0, false},
		{"five digits", code(s)[:5], 0, 0, false},
		{"seven digits", code(s) + "0", 0, 0, false},
		{"letters", "12a456", 0, 0, false},
		{"empty", "", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, ok := MatchTOTP(rfcSecret, tt.code, now, tt.lastStep)
			if step != tt.wantStep || ok != tt.wantOK {
				t.Fatalf("MatchTOTP(%q, last %d) = %d, %v, want %d, %v", tt.code, tt.lastStep, step, ok, tt.wantStep, tt.wantOK)
			}
		})
	}
}

// Each code once: the step returned, stored as lastStep, refuses the same
// code for the rest of its life (three steps, with the skew).
func TestMatchTOTPOnce(t *testing.T) {
	secret, _, err := NewTOTPKey("ada@example.com")
	if err != nil {
		t.Fatalf("NewTOTPKey: %v", err)
	}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	c, err := totp.GenerateCode(secret, t0)
	if err != nil {
		t.Fatalf("GenerateCode: %v", err)
	}
	last, ok := MatchTOTP(secret, c, t0, 0)
	if !ok {
		t.Fatalf("first use refused")
	}
	for _, later := range []time.Duration{0, time.Second, 29 * time.Second, 30 * time.Second, 59 * time.Second} {
		if step, ok := MatchTOTP(secret, c, t0.Add(later), last); ok {
			t.Fatalf("code reused %v later accepted (step %d, last %d)", later, step, last)
		}
	}
}

func TestMatchTOTPBadSecret(t *testing.T) {
	if _, ok := MatchTOTP("not base32 !!", "123456", time.Unix(1e9, 0), 0); ok {
		t.Fatalf("MatchTOTP with a bad secret = ok")
	}
}

func TestTOTPStep(t *testing.T) {
	tests := []struct {
		unix int64
		want int64
	}{
		{0, 0}, {29, 0}, {30, 1}, {59, 1}, {60, 2}, {-1, -1}, {-30, -1}, {-31, -2},
	}
	for _, tt := range tests {
		if got := TOTPStep(time.Unix(tt.unix, 0)); got != tt.want {
			t.Errorf("TOTPStep(%d) = %d, want %d", tt.unix, got, tt.want)
		}
	}
}

func TestQRCodePNG(t *testing.T) {
	u := TOTPURL("ada@example.com", rfcSecret)
	b, err := QRCodePNG(u)
	if err != nil {
		t.Fatalf("QRCodePNG: %v", err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("not a PNG: % x", b[:8])
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("png.Decode: %v", err)
	}
	if r := img.Bounds(); r.Dx() != QRCodeSize || r.Dy() != QRCodeSize {
		t.Fatalf("image is %dx%d, want %dx%d", r.Dx(), r.Dy(), QRCodeSize, QRCodeSize)
	}
	// The top-left finder pattern starts at the first dark pixel: its first
	// row is a run of seven dark modules, which gives the module's size,
	// and a quiet zone of at least four modules lies before it.
	dark := func(x, y int) bool {
		r, g, bl, _ := img.At(x, y).RGBA()
		return r|g|bl == 0
	}
	off := 0
	for off < QRCodeSize && !dark(off, off) {
		off++
	}
	run := 0
	for off+run < QRCodeSize && dark(off+run, off) {
		run++
	}
	if run%7 != 0 || run == 0 {
		t.Fatalf("finder pattern's first row is %d pixels, want 7 modules", run)
	}
	module := run / 7
	if off < 4*module {
		t.Fatalf("quiet zone is %d pixels, want at least 4 modules of %d", off, module)
	}
	// The same margin on the right: the top-right finder ends 'off' pixels
	// (give or take the rounding of the centring) from the edge.
	end := QRCodeSize - 1
	for end >= 0 && !dark(end, off) {
		end--
	}
	if right := QRCodeSize - 1 - end; right < 4*module {
		t.Fatalf("right quiet zone is %d pixels, want at least 4 modules of %d", right, module)
	}
	// A QR reader (ZXing's Go port) reads the URL back.
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatalf("NewBinaryBitmapFromImage: %v", err)
	}
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil) // finds it as a camera would
	if err != nil {
		t.Fatalf("decode the QR code: %v", err)
	}
	if res.GetText() != u {
		t.Fatalf("QR code reads %q, want %q", res.GetText(), u)
	}
	other, err := QRCodePNG(TOTPURL("bob@example.com", rfcSecret))
	if err != nil {
		t.Fatalf("QRCodePNG: %v", err)
	}
	if bytes.Equal(b, other) {
		t.Fatalf("two URLs draw the same image")
	}
	if _, err := QRCodePNG(string(make([]byte, 5000))); err == nil {
		t.Fatalf("QRCodePNG of 5,000 bytes: err = nil, want too long")
	}
}

// wrongCode is a six-digit code none of the given ones.
func wrongCode(avoid ...string) string {
	for _, c := range []string{"000000", "111111", "222222", "333333"} {
		bad := false
		for _, a := range avoid {
			bad = bad || a == c
		}
		if !bad {
			return c
		}
	}
	panic("unreachable")
}
