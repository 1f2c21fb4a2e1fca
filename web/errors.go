package web

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/outdial/outdial/dialer/phone"
	"github.com/outdial/outdial/store"
)

// httpError is an error that carries its own status and client message.
// cause, when set, is what went wrong behind a 5xx, logged by writeError
// and never shown to the client.
type httpError struct {
	status int
	detail string
	cause  error
}

func (e *httpError) Error() string {
	if e.cause != nil {
		return e.detail + ": " + e.cause.Error()
	}
	return e.detail
}

func (e *httpError) Unwrap() error { return e.cause }

// errStatus returns an error answered with status and {"detail": detail}.
func errStatus(status int, detail string) error { return &httpError{status: status, detail: detail} }

// errorStatus maps a store error code to its HTTP status; this is the only
// place that does.
func errorStatus(code string) int {
	switch code {
	case store.ENOTFOUND:
		return http.StatusNotFound
	case store.ECONFLICT:
		return http.StatusConflict
	case store.EINVALID:
		return http.StatusUnprocessableEntity
	case store.EGONE:
		return http.StatusGone
	}
	return http.StatusInternalServerError
}

// StatusClientClosedRequest is the status of a request whose client went
// away before it was answered (nginx's 499 "client closed request"), as the
// request log records it (a provider webhook counts as canceled in
// outdial_webhooks_total). No body is sent: no one reads it.
const StatusClientClosedRequest = 499

// clientClosed reports whether r's client went away: net/http cancels a
// request's context when its connection closes (or, with HTTP/2, when the
// client resets the stream), with the plain context.Canceled as its cause.
// A deadline that we set on a request's context is context.DeadlineExceeded,
// and a cancellation of ours with a cause of its own names that cause: both
// are not the client's doing.
func clientClosed(r *http.Request) bool {
	ctx := r.Context()
	return ctx.Err() != nil && context.Cause(ctx) == context.Canceled
}

// writeError answers err in the contract's shape: 422 with the problem list for
// a *ValidationError, the carried status for an *httpError, the mapped status
// for a store error, and 500 "Internal Server Error" (logged once, here) for
// anything else. A request whose client went away (clientClosed) is none of
// these, whatever err is (the store's context.Canceled, SQLite's "interrupted"
// when a query was cut short, a provider request cancelled midway): it is
// StatusClientClosedRequest, logged at Debug only, never counted as a server
// error. What it logs goes through phone.MaskText: a provider's error may
// quote a phone number.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ve *ValidationError
	var he *httpError
	var ae *authError
	switch {
	case clientClosed(r):
		s.log.DebugContext(context.WithoutCancel(r.Context()), "client closed request", slog.String("method", r.Method),
			slog.String("path", phone.MaskText(r.URL.Path)), slog.String("error", phone.MaskText(err.Error())))
		w.WriteHeader(StatusClientClosedRequest)
	case errors.As(err, &ae):
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeJSON(w, http.StatusUnauthorized, map[string]string{"detail": ae.detail})
	case errors.As(err, &ve):
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": portableInputs(ve.Problems)})
	case errors.As(err, &he):
		if he.cause != nil && he.status >= 500 {
			s.log.ErrorContext(r.Context(), "upstream error", slog.String("method", r.Method),
				slog.String("path", phone.MaskText(r.URL.Path)), slog.Int("status", he.status), slog.String("detail", phone.MaskText(he.detail)),
				slog.String("error", phone.MaskText(he.cause.Error())))
		}
		writeJSON(w, he.status, map[string]string{"detail": he.detail})
	case errors.Is(err, errBodyTooLarge):
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"detail": "Request body too large"})
	case store.ErrorCode(err) != "":
		status := errorStatus(store.ErrorCode(err))
		if status == http.StatusUnprocessableEntity {
			writeJSON(w, status, map[string]any{"detail": Problems{{Loc: []any{"body"}, Msg: "Value error, " + store.ErrorMessage(err), Type: "value_error"}}})
			return
		}
		writeJSON(w, status, map[string]string{"detail": store.ErrorMessage(err)})
	default:
		s.log.ErrorContext(r.Context(), "internal error", slog.String("method", r.Method),
			slog.String("path", phone.MaskText(r.URL.Path)), slog.String("error", phone.MaskText(err.Error())))
		writeJSON(w, http.StatusInternalServerError, map[string]string{"detail": "Internal Server Error"})
	}
}

// writeJSON answers status with v encoded as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"detail":"Internal Server Error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n')) //nolint:errcheck // client gone
}

// portableInputs returns problems whose inputs every JSON decoder can read
// back: a number sent beyond float64's range (1e400) is echoed as a string,
// since many clients (Go's encoding/json, JavaScript) cannot decode it.
func portableInputs(ps Problems) Problems {
	out := make(Problems, len(ps))
	for i, p := range ps {
		p.Input = portableNumbers(p.Input)
		out[i] = p
	}
	return out
}

func portableNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(x.String(), 64); err != nil {
			return x.String()
		}
		return x
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = portableNumbers(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = portableNumbers(e)
		}
		return l
	}
	return v
}
