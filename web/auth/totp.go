package auth

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"strings"
	"time"

	"github.com/boombuler/barcode/qr"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// TOTP settings of API.md 17: the ones every authenticator app assumes
// (RFC 6238's defaults), so the URL need not name them.
const (
	TOTPIssuer = "Outdial"
	TOTPPeriod = 30 * time.Second
	TOTPDigits = 6
	// TOTPSkew is how many steps before and after the current one a code
	// may come from, for clocks that disagree a little.
	TOTPSkew = 1
)

// QRCodeSize is the width and height in pixels of QRCodePNG's image.
const QRCodeSize = 256

// totpOpts are pquerna/otp's options for TOTPDigits and SHA1.
var totpOpts = totp.ValidateOpts{
	Period:    uint(TOTPPeriod / time.Second),
	Digits:    otp.DigitsSix,
	Algorithm: otp.AlgorithmSHA1,
}

// NewTOTPKey makes a second-factor key for the user with this email: a
// random 160-bit secret (RFC 4226's recommended size), returned as
// unpadded upper-case base32, and the URL an authenticator app enrols it
// from, exactly
// `otpauth://totp/Outdial:<email>?secret=<base32>&issuer=Outdial` with the
// email escaped as a path segment (SHA1, 6 digits and 30 s are the
// defaults apps assume; pquerna/otp's own URL would add them as
// parameters, which the contract leaves out). The only errors are an empty
// email and the system's random source failing.
func NewTOTPKey(email string) (secret, enrolURL string, err error) {
	key, err := totp.Generate(totp.GenerateOpts{
		Issuer:      TOTPIssuer,
		AccountName: email,
		Period:      totpOpts.Period,
		Digits:      totpOpts.Digits,
		Algorithm:   totpOpts.Algorithm,
	})
	if err != nil {
		return "", "", fmt.Errorf("new totp key: %w", err)
	}
	secret = key.Secret()
	return secret, TOTPURL(email, secret), nil
}

// TOTPURL is the enrolment URL of NewTOTPKey for an existing secret, for a
// page shown again before the user confirms the first code.
func TOTPURL(email, secret string) string {
	return "otpauth://totp/" + TOTPIssuer + ":" + url.PathEscape(email) +
		"?secret=" + url.QueryEscape(secret) + "&issuer=" + TOTPIssuer
}

// QRCodePNG draws s (an enrolment URL) as a QR code with medium error
// correction, black on white, QRCodeSize pixels square with whole pixels a
// module and at least the four-module quiet zone around it that scanners
// need (ISO/IEC 18004), and returns the PNG file (one bit a pixel). Errors
// come from a text too long for a QR code or for QRCodeSize.
func QRCodePNG(s string) ([]byte, error) {
	code, err := qr.Encode(s, qr.M, qr.Auto)
	if err != nil {
		return nil, fmt.Errorf("qr code: %w", err)
	}
	n := code.Bounds().Dx() // modules a side
	px := QRCodeSize / (n + 2*4)
	if px < 1 {
		return nil, fmt.Errorf("qr code: %d modules do not fit %d pixels", n, QRCodeSize)
	}
	off := (QRCodeSize - n*px) / 2
	img := image.NewPaletted(image.Rect(0, 0, QRCodeSize, QRCodeSize),
		color.Palette{color.White, color.Black})
	for y := range n {
		for x := range n {
			if color.GrayModel.Convert(code.At(x, y)).(color.Gray).Y >= 0x80 {
				continue // a light module: the background
			}
			for dy := range px {
				for dx := range px {
					img.SetColorIndex(off+x*px+dx, off+y*px+dy, 1)
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("qr code: png: %w", err)
	}
	return buf.Bytes(), nil
}

// TOTPStep is the number of the TOTPPeriod-long step t falls in, counted
// from the Unix epoch (RFC 6238's T).
func TOTPStep(t time.Time) int64 {
	s := t.Unix()
	p := int64(TOTPPeriod / time.Second)
	if s < 0 {
		return (s - p + 1) / p
	}
	return s / p
}

// MatchTOTP checks code, as a user typed it (spaces are ignored), against
// the secret at time now: it accepts the code of the current step or of
// TOTPSkew steps on either side, but only of a step after lastStep, so each
// code works once (store the returned step as the next lastStep; 0 for a
// user who has never used one). On a match it returns the matched step and
// true; otherwise 0 and false, also for a code that is not six digits or a
// secret that is not base32. The codes are compared in constant time.
func MatchTOTP(secret, code string, now time.Time, lastStep int64) (step int64, ok bool) {
	code = strings.ReplaceAll(code, " ", "")
	if len(code) != TOTPDigits || strings.Trim(code, "0123456789") != "" {
		return 0, false
	}
	cur := TOTPStep(now)
	for s := cur - TOTPSkew; s <= cur+TOTPSkew; s++ {
		if s <= lastStep || s < 0 {
			continue
		}
		want, err := totp.GenerateCodeCustom(secret, time.Unix(s*int64(totpOpts.Period), 0), totpOpts)
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return s, true
		}
	}
	return 0, false
}
