package egress

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestCheckTable(t *testing.T) {
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("fd00::1/128")}
	tests := []struct {
		addr          string
		blocked       string // the range named, "" when allowed
		allowLoopback bool   // still refused with 127.0.0.0/8 allowed
	}{
		{"8.8.8.8", "", false},
		{"1.1.1.1", "", false},
		{"2606:4700:4700::1111", "", false},
		{"127.0.0.1", "loopback", false},
		{"127.255.255.254", "loopback", false},
		{"::1", "loopback", true},
		{"::ffff:127.0.0.1", "loopback", false},
		{"::ffff:10.1.2.3", "private", true},
		{"10.0.0.1", "private", true},
		{"172.16.0.1", "private", true},
		{"172.31.255.255", "private", true},
		{"172.32.0.1", "", false},
		{"192.168.1.1", "private", true},
		{"169.254.169.254", "link-local", true}, // cloud metadata
		{"100.64.0.1", "shared (CGNAT)", true},
		{"0.0.0.0", "this-network", true},
		{"192.0.0.170", "IETF protocol assignments", true},
		{"192.0.2.1", "documentation", true},
		{"198.18.0.1", "benchmarking", true},
		{"224.0.0.1", "multicast", true},
		{"255.255.255.255", "reserved or broadcast", true},
		{"240.0.0.1", "reserved or broadcast", true},
		{"::", "unspecified", true},
		{"fe80::1", "link-local", true},
		{"fe80::1%eth0", "link-local", true},
		{"fc00::1", "unique-local", true},
		{"fd00::1", "unique-local", false}, // listed on its own
		{"ff02::1", "multicast", true},
		{"2001:db8::1", "documentation", true},
		{"64:ff9b::7f00:1", "loopback", false},  // NAT64 of 127.0.0.1
		{"64:ff9b::a00:1", "private", true},     // NAT64 of 10.0.0.1
		{"64:ff9b::808:808", "", false},         // NAT64 of 8.8.8.8
		{"2002:c0a8:101::1", "private", true},   // 6to4 of 192.168.1.1
		{"2002:0808:0808::1", "", false},        // 6to4 of 8.8.8.8
		{"64:ff9b:1::1", "local NAT64", true},   // local-use NAT64
		{"100::1", "discard-only", true},        // discard prefix
		{"2001:4860:4860::8888", "", false},     // a public resolver
		{"::ffff:8.8.8.8", "", false},           // mapped public
		{"203.0.113.7", "documentation", true},  // TEST-NET-3
		{"198.51.100.7", "documentation", true}, // TEST-NET-2
	}
	deny, allow := NewGuard(nil), NewGuard(loopback)
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			addr := netip.MustParseAddr(tc.addr)
			err := deny.Check(addr)
			var be *BlockedError
			if tc.blocked == "" {
				if err != nil {
					t.Fatalf("public %s refused: %v", tc.addr, err)
				}
			} else if !errors.As(err, &be) || be.Range != tc.blocked {
				t.Fatalf("Check(%s) = %v, want refused as %s", tc.addr, err, tc.blocked)
			}
			wantAllowed := tc.blocked == "" || !tc.allowLoopback
			if err := allow.Check(addr); (err == nil) != wantAllowed {
				t.Fatalf("with 127.0.0.0/8 and fd00::1 allowed, Check(%s) = %v; allowed want %v", tc.addr, err, wantAllowed)
			}
		})
	}
}

// TestClientRefusesAfterDNS dials a real local server: by address and by
// a name that resolves to it, both refused unless loopback is allowed.
func TestClientRefusesAfterDNS(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, url := range []string{srv.URL, "http://localhost:" + port} {
		_, err := NewClient(NewGuard(nil), ClientOptions{Timeout: 5 * time.Second}).Get(url)
		var be *BlockedError
		if !errors.As(err, &be) {
			t.Fatalf("GET %s without loopback allowed = %v, want a BlockedError", url, err)
		}
		allowed := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
		resp, err := NewClient(NewGuard(allowed), ClientOptions{Timeout: 5 * time.Second}).Get(url)
		if err != nil {
			t.Fatalf("GET %s with loopback allowed: %v", url, err)
		}
		resp.Body.Close()
	}
}

func TestClientFollowsNoRedirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
	}))
	defer srv.Close()
	allowed := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL, nil)
	resp, err := NewClient(NewGuard(allowed), ClientOptions{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") == "" {
		t.Fatalf("status %d: the redirect was followed", resp.StatusCode)
	}
}

func TestCheckURL(t *testing.T) {
	g := NewGuard(nil)
	tests := []struct{ url, err string }{
		{"https://hooks.example.com/x?y=1", ""},
		{"http://example.com", ""},
		{"ftp://example.com/x", "scheme"},
		{"https:///path", "no host"},
		{"https://user:pw@example.com/", "credentials"},
		{"https://example.com/#frag", "fragment"},
		{"http://127.0.0.1:8080/", "loopback"},
		{"http://[::ffff:169.254.169.254]/", "link-local"},
		{"http://[fe80::1%25eth0]/", "link-local"},
		{"::not a url", "not a URL"},
	}
	for _, tc := range tests {
		_, err := g.CheckURL(tc.url)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckURL(%q) = %v, want error containing %q", tc.url, err, tc.err)
		}
	}
}
