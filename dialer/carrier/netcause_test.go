package carrier

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestTransportCause: the words for each kind of transport failure, with
// no address, resolver or URL in them.
func TestTransportCause(t *testing.T) {
	dial := func(err error) error {
		return &url.Error{Op: "Post", URL: "http://10.1.2.3:8088/ari/channels?api_key=x",
			Err: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 8088}, Err: err}}
	}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), "connection refused"},
		{"unknown host", dial(&net.DNSError{Err: "no such host", Name: "asterisk.internal", Server: "10.0.0.53:53", IsNotFound: true}), "the host name does not resolve"},
		{"dns timeout", dial(&net.DNSError{Err: "i/o timeout", Name: "asterisk.internal", IsTimeout: true}), "the DNS lookup timed out"},
		{"dns failure", dial(&net.DNSError{Err: "server misbehaving", Name: "asterisk.internal"}), "the DNS lookup failed"},
		{"no route", dial(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), "no route to the host"},
		{"network unreachable", dial(os.NewSyscallError("connect", syscall.ENETUNREACH)), "the network is unreachable"},
		{"reset", &url.Error{Op: "Post", URL: "http://h", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "the connection was reset"},
		{"deadline", fmt.Errorf("dial: %w", context.DeadlineExceeded), "timed out"},
		{"net timeout", dial(os.ErrDeadlineExceeded), "timed out"},
		{"untrusted certificate", &url.Error{Op: "Get", URL: "https://h", Err: x509.UnknownAuthorityError{}}, "the TLS certificate is not trusted"},
		{"closed", &url.Error{Op: "Post", URL: "http://h", Err: io.EOF}, "the connection was closed"},
		{"something else", errors.New("decode answer: invalid character"), ""},
	} {
		got := TransportCause(tt.err)
		if got != tt.want {
			t.Errorf("%s: TransportCause = %q, want %q", tt.name, got, tt.want)
		}
		for _, leak := range []string{"10.1.2.3", "8088", "asterisk.internal", "10.0.0.53", "api_key"} {
			if strings.Contains(got, leak) {
				t.Errorf("%s: %q names %s", tt.name, got, leak)
			}
		}
	}
}
