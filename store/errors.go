package store

import (
	"database/sql"
	"errors"
	"fmt"
)

// Error codes carried by *Error. The web layer maps each to one HTTP status
// (web/errors.go); nothing else interprets them.
const (
	ENOTFOUND = "not_found" // the resource does not exist in the caller's organization
	ECONFLICT = "conflict"  // a uniqueness or state rule refuses the change
	EINVALID  = "invalid"   // the input breaks a rule only the store can check
	EGONE     = "gone"      // a one-time link that existed but was used or has expired
)

// Error is a domain error with a code and a message safe to show to the
// client (it never contains a secret).
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, or "" when
// there is none (an internal error).
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// ErrorMessage returns the message of the first *Error in err's chain, or ""
// when there is none.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}

// notFound turns sql.ErrNoRows into an ENOTFOUND *Error naming what was looked
// for, and wraps any other error.
func notFound(err error, what string, id int64) error {
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(ENOTFOUND, "%s %d not found", what, id)
	}
	return fmt.Errorf("get %s: %w", what, err)
}
