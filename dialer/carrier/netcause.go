package carrier

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// TransportCause says in a few words why a request got no answer from a
// provider, from a transport error: "connection refused", "the host name
// does not resolve", "the DNS lookup failed", "timed out", "no route to the
// host", "the network is unreachable", "the connection was reset", "the
// connection was closed", "the TLS certificate is not trusted", "the TLS
// handshake failed"; "" when err is none of these (or nil). The words name
// no address, resolver or URL: they may be shown to the organization (a
// campaign's log, its diagnosis), while err itself, which does, is for the
// server's log only.
func TransportCause(err error) string {
	if err == nil {
		return ""
	}
	var dns *net.DNSError
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	switch {
	case errors.As(err, &dns):
		switch {
		case dns.IsNotFound:
			return "the host name does not resolve"
		case dns.IsTimeout:
			return "the DNS lookup timed out"
		}
		return "the DNS lookup failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to the host"
	case errors.Is(err, syscall.ENETUNREACH):
		return "the network is unreachable"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the connection was reset"
	case errors.As(err, &verify), errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid):
		return "the TLS certificate is not trusted"
	case errors.As(err, &record):
		return "the TLS handshake failed"
	case timedOut(err):
		return "timed out"
	case errors.Is(err, net.ErrClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed"
	}
	return ""
}

// timedOut reports whether err is a timeout: a deadline, or a net.Error
// that says so.
func timedOut(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
