package web

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// HSTS is the Strict-Transport-Security value every response carries when
// the service terminates TLS itself (Config.TLS, API.md 18): browsers use
// https for the host for a year.
const HSTS = "max-age=31536000"

// HTTPSRedirect returns the handler of the plain-HTTP listener of a service
// that serves TLS (serve --http-addr; cmd puts the ACME HTTP-01 challenge
// answers in front of it): every request is answered 308 Permanent Redirect
// to the same path and query over https, on the host the request named
// (without its port) or, when it named none, publicURL's, and on
// publicURL's port (omitted for 443). 308 keeps the method and body, so a
// provider's webhook POST sent to http:// arrives at the https address
// rather than being turned into a GET. publicURL must be an absolute https
// URL.
func HTTPSRedirect(publicURL string) (http.Handler, error) {
	u, err := url.Parse(publicURL)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" {
		return nil, fmt.Errorf("redirect to https: public URL %q is not an https URL", publicURL)
	}
	defaultHost, port := u.Hostname(), u.Port()
	if port == "443" {
		port = ""
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := requestHost(r.Host)
		if host == "" {
			host = defaultHost
		}
		if port != "" {
			host = net.JoinHostPort(host, port)
		} else if strings.Contains(host, ":") {
			host = "[" + host + "]" // an IPv6 literal
		}
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusPermanentRedirect)
	}), nil
}

// requestHost is the host of a Host header without its port and without
// the brackets of an IPv6 literal ("" for none).
func requestHost(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}
