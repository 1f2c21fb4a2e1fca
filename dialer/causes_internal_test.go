package dialer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/outdial/outdial/dialer/carrier"
)

// TestProviderTroubleWords: a 429, a provider that cannot take calls (ARI's
// events websocket), one that cannot be reached and one answering 5xx are
// told apart in the words of the campaign log and the diagnosis.
func TestProviderTroubleWords(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://10.0.0.5:8088/calls",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	noHost := &url.Error{Op: "Post", URL: "https://api.example/calls",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Name: "api.example", IsNotFound: true}}}
	for _, tt := range []struct {
		name, got, want string
	}{
		{"429", backoffCause(&carrier.Error{Kind: carrier.RateLimited, HTTPStatus: 429}),
			"the provider answered 429 (too many requests)"},
		{"a rate-limit code", backoffCause(&carrier.Error{Kind: carrier.RateLimited, HTTPStatus: 403, Code: "90103"}),
			"the provider refused the call request for its rate limit (http 403, code 90103)"},
		{"ari events down", backoffCause(&carrier.Error{Kind: carrier.Unavailable,
			Message: "the events websocket connection to Asterisk at 10.0.0.5:8088 cannot be made (connection refused)"}),
			"the events websocket connection to Asterisk at 10.0.0.5:8088 cannot be made (connection refused)"},
		{"unavailable, unsaid", backoffCause(&carrier.Error{Kind: carrier.Unavailable}), "the provider cannot take calls now"},
		{"refused", unreachableCause(refused), "the provider could not be reached (connection refused)"},
		{"dns", unreachableCause(noHost), "the provider could not be reached (the host name does not resolve)"},
		{"unreachable, unsaid", unreachableCause(errors.New("odd")), "the provider could not be reached"},
		{"503", unconfirmedCause(fmt.Errorf("twilio place: %w", &carrier.ServerError{HTTPStatus: 503, Message: "down"})),
			"the provider answered 503 (Service Unavailable) to a call request"},
		{"599", unconfirmedCause(&carrier.ServerError{HTTPStatus: 599}), "the provider answered 599 (unknown status) to a call request"},
		{"timeout", unconfirmedCause(&url.Error{Op: "Post", URL: "u", Err: context.DeadlineExceeded}),
			"the provider did not answer a call request in time"},
		{"reset", unconfirmedCause(&url.Error{Op: "Post", URL: "u", Err: os.NewSyscallError("read", syscall.ECONNRESET)}),
			"the provider's answer to a call request was lost (the connection was reset)"},
		{"eof", unconfirmedCause(&url.Error{Op: "Post", URL: "u", Err: io.EOF}),
			"the provider's answer to a call request was lost (the connection was closed)"},
		{"unreadable", unconfirmedCause(errors.New("decode answer (http 201): unexpected end of JSON input")),
			"the provider's answer to a call request was lost or unreadable"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
