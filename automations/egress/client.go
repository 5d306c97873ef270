package egress

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ClientOptions shape the outbound client.
type ClientOptions struct {
	// Timeout bounds a whole request: connect, TLS, headers and the body
	// read the caller does before it returns.
	Timeout time.Duration
	// MaxConnsPerHost bounds connections to one receiver (0: no bound).
	MaxConnsPerHost int
}

// NewClient is an HTTP client whose every connection passes the guard.
// It follows no redirect (a 3xx is the answer) and ignores proxy
// settings, which would hide the real target from the check.
func NewClient(g *Guard, opts ClientOptions) *http.Client {
	dialer := &net.Dialer{Timeout: min(opts.Timeout, 10*time.Second), Control: g.control}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    min(opts.Timeout, 10*time.Second),
		ResponseHeaderTimeout:  opts.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    8,
		MaxConnsPerHost:        opts.MaxConnsPerHost,
		IdleConnTimeout:        90 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   opts.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// control runs for every socket the dialer opens, with the resolved
// address about to be connected.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: unexpected dial address %q (%s): %w", address, network, err)
	}
	return g.Check(ap.Addr())
}

// CheckURL validates a webhook URL when it is saved: http or https, a
// host, no credentials in it, and a literal address that passes the
// guard. Names are checked when dialled, as their addresses may change.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("scheme %q: use http or https", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("no host; use https://host/path")
	case u.User != nil:
		return nil, fmt.Errorf("credentials in the URL are not sent; store the token as a secret and set access_token_secret")
	case u.Fragment != "":
		return nil, fmt.Errorf("a fragment (#%s) is never sent; remove it", u.Fragment)
	}
	if addr, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if err := g.Check(addr); err != nil {
			return nil, err
		}
	}
	return u, nil
}
