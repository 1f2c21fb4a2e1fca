package store

import (
	"context"
	"errors"
	"fmt"
)

// ErrWrongSecret is what a *WrongSecretError matches with errors.Is.
var ErrWrongSecret = errors.New("the server secret cannot decrypt what the database holds")

// WrongSecretError says that the store's server secret does not open a value
// sealed in the database: another secret sealed it. Nodes sharing one
// database must share the secret (API.md 16); a node with another one would
// fail every call of the configurations it cannot read, so it refuses to
// start instead.
type WrongSecretError struct {
	// ConfigID is the telephony configuration whose credentials did not
	// open.
	ConfigID int64
	// Err is why (the authentication of the sealed value failed, or its
	// format is unknown).
	Err error
}

func (e *WrongSecretError) Error() string {
	return fmt.Sprintf("%v (the credentials of telephony configuration %d do not open with it: %v)", ErrWrongSecret, e.ConfigID, e.Err)
}

// Is reports whether target is ErrWrongSecret.
func (e *WrongSecretError) Is(target error) bool { return target == ErrWrongSecret }

// Unwrap returns the sealing error.
func (e *WrongSecretError) Unwrap() error { return e.Err }

// CheckSecret opens one value sealed in the database (the credentials of the
// oldest telephony configuration) with the store's sealer and returns a
// *WrongSecretError when it does not open. A database that holds no sealed
// value passes: there is nothing to compare the secret with. It reads one
// row and writes nothing; serve calls it at start and doctor reports it.
func (db *DB) CheckSecret(ctx context.Context) error {
	rows, err := db.rq.FirstSealedCredential(ctx)
	if err != nil {
		return fmt.Errorf("check server secret: %w", err)
	}
	for _, r := range rows {
		if _, err := db.sealer.Open(r.Credentials, credentialsAD(r.ID)); err != nil {
			return &WrongSecretError{ConfigID: r.ID, Err: err}
		}
	}
	return nil
}
