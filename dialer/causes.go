package dialer

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/outdial/outdial/dialer/carrier"
)

// What a provider's trouble was, in the words of a campaign's log and its
// diagnosis (API.md 11): a provider that answered 429 (its rate limit), one
// that cannot take calls for another reason of its side (ARI: the events
// websocket cannot be made), one that could not be reached (connection
// refused, DNS, timeout), and one that answered 5xx are told apart. The
// words are the organization's to read: they never hold a URL, a resolved
// address or a credential (carrier.TransportCause words transport errors;
// an ARI configuration's messages name its ari_endpoint's host:port, which
// the organization gave).

// backoffCause says why a place request answered with perr (RateLimited or
// Unavailable) holds the configuration's calls back.
func backoffCause(perr *carrier.Error) string {
	if perr.Kind == carrier.Unavailable {
		if perr.Message != "" {
			return perr.Message
		}
		return "the provider cannot take calls now"
	}
	switch {
	case perr.HTTPStatus == http.StatusTooManyRequests:
		return "the provider answered 429 (too many requests)"
	case perr.Code != "":
		return fmt.Sprintf("the provider refused the call request for its rate limit (http %d, code %s)", perr.HTTPStatus, perr.Code)
	}
	return fmt.Sprintf("the provider refused the call request for its rate limit (http %d)", perr.HTTPStatus)
}

// unreachableCause says why a place request that never left (requestNotSent)
// did not: "the provider could not be reached (connection refused)".
func unreachableCause(err error) string {
	if c := carrier.TransportCause(err); c != "" {
		return holdUnreachable + " (" + c + ")"
	}
	return holdUnreachable
}

// unconfirmedCause says what became of a place request whose answer was
// not a definite one (unconfirmed): a 5xx, no answer in time, a connection
// lost after the request was sent, or an answer that could not be read.
func unconfirmedCause(err error) string {
	var serr *carrier.ServerError
	if errors.As(err, &serr) {
		return fmt.Sprintf("the provider answered %d (%s) to a call request", serr.HTTPStatus, statusText(serr.HTTPStatus))
	}
	switch c := carrier.TransportCause(err); c {
	case "":
		return "the provider's answer to a call request was lost or unreadable"
	case "timed out":
		return "the provider did not answer a call request in time"
	default:
		return "the provider's answer to a call request was lost (" + c + ")"
	}
}

// statusText is http.StatusText, "unknown status" for a code it does not
// know.
func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return t
	}
	return "unknown status"
}
