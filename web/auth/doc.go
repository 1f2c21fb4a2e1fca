// Package auth holds the credential primitives of people signing in (API.md
// section 17): the password policy, argon2id password hashes, TOTP second
// factors, recovery codes, one-time link tokens and the sign-in throttle
// rule. It is a leaf: it imports nothing from this module, keeps no state
// beyond its embedded password list, and takes the time as an argument
// wherever time matters, so the store, the API and the console decide where
// secrets live and the tests never sleep.
//
// One file a concern: passwords.go (the policy and its embedded list),
// hash.go (argon2id), totp.go (second factors and their QR code),
// recovery.go (recovery codes), token.go (one-time link tokens) and
// limiter.go (the throttle rule).
package auth
