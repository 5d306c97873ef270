package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writePair writes a generated pair into dir and returns the Files.
func writePair(t *testing.T, dir string, p Pair) Files {
	t.Helper()
	f := Files{CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem"),
		CertKey: "tls_cert_file", KeyKey: "tls_key_file"}
	if err := os.WriteFile(f.CertFile, p.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.KeyFile, p.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestServerConfigRefusesBadFiles(t *testing.T) {
	now := time.Now()
	good, other, old := mustPair(t, now), mustPair(t, now), mustPair(t, now.Add(-2*SelfSignedValidity))
	tests := []struct {
		name   string
		mutate func(f *Files, dir string)
		want   []string // substrings of the error
	}{
		{"no cert path", func(f *Files, _ string) { f.CertFile = "" }, []string{"tls_cert_file", "set both"}},
		{"no key path", func(f *Files, _ string) { f.KeyFile = "" }, []string{"tls_key_file", "set both"}},
		{"missing cert", func(f *Files, dir string) { f.CertFile = filepath.Join(dir, "nope.pem") }, []string{"tls_cert_file", "does not exist", "weft certs"}},
		{"key is not PEM", func(f *Files, _ string) { mustWrite(t, f.KeyFile, []byte("not pem")) }, []string{"tls_cert_file", "tls_key_file", "do not form"}},
		{"key of another cert", func(f *Files, _ string) { mustWrite(t, f.KeyFile, other.KeyPEM) }, []string{"do not form", "weft certs"}},
		{"cert and key swapped", func(f *Files, _ string) { f.CertFile, f.KeyFile = f.KeyFile, f.CertFile }, []string{"do not form"}},
		{"expired", func(f *Files, _ string) { mustWrite(t, f.CertFile, old.CertPEM); mustWrite(t, f.KeyFile, old.KeyPEM) }, []string{"tls_cert_file", "expired", "--force"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := writePair(t, dir, good)
			tt.mutate(&f, dir)
			_, err := ServerConfig(f, now)
			if err == nil {
				t.Fatal("loaded a bad pair")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func mustWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSelfSignedHandshake serves TLS with a generated pair and connects
// with a client that trusts only that certificate, by each name it covers;
// a name it does not cover fails verification.
func TestSelfSignedHandshake(t *testing.T) {
	now := time.Now()
	pair, err := SelfSigned([]string{"localhost", "127.0.0.1", "weft.test"}, now)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ServerConfig(writePair(t, t.TempDir(), pair), now)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveHello(t, cfg)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pair.CertPEM) {
		t.Fatal("generated certificate is not PEM")
	}
	tests := []struct {
		serverName string
		ok         bool
	}{{"localhost", true}, {"127.0.0.1", true}, {"weft.test", true}, {"example.com", false}}
	for _, tt := range tests {
		t.Run(tt.serverName, func(t *testing.T) {
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
				&tls.Config{RootCAs: roots, ServerName: tt.serverName, MinVersion: tls.VersionTLS12})
			if !tt.ok {
				if err == nil {
					conn.Close()
					t.Fatal("handshake succeeded for a name the certificate does not cover")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			got, err := io.ReadAll(conn)
			if err != nil || string(got) != "hello" {
				t.Fatalf("read %q, %v", got, err)
			}
		})
	}
}

// serveHello answers every TLS connection with "hello" until the test
// ends, and returns the address.
func serveHello(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.WriteString(c, "hello"); _ = c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func TestSelfSignedRefusesBadHosts(t *testing.T) {
	for _, h := range []string{"", "has space", "-lead.example", "under_score.example", strings.Repeat("a", 64) + ".example"} {
		if _, err := SelfSigned([]string{h}, time.Now()); err == nil || !strings.Contains(err.Error(), "host") {
			t.Errorf("host %q: err %v; want a host error", h, err)
		}
	}
	p, err := SelfSigned([]string{"*.weft.test", "10.0.0.7"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert := parse(t, p.CertPEM)
	if len(cert.DNSNames) != 1 || cert.DNSNames[0] != "*.weft.test" || len(cert.IPAddresses) != 1 {
		t.Errorf("names %v %v", cert.DNSNames, cert.IPAddresses)
	}
	if !cert.IsCA || !cert.MaxPathLenZero || cert.NotAfter.Sub(cert.NotBefore) > 398*24*time.Hour {
		t.Errorf("CA %v, path len zero %v, validity %s", cert.IsCA, cert.MaxPathLenZero, cert.NotAfter.Sub(cert.NotBefore))
	}
}

func parse(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustPair(t *testing.T, now time.Time) Pair {
	t.Helper()
	p, err := SelfSigned(nil, now)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
