// Package tlsutil loads the PEM certificate and key the API and OTLP/gRPC
// listeners serve TLS with, and makes a self-signed pair for local
// development (weft certs).
//
// It imports nothing of the project: the configuration names the files,
// app wraps the listeners, cmd/weft writes the generated pair.
package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"
)

// Files names a certificate and its private key, PEM-encoded. CertKey and
// KeyKey are the setting names errors point at (e.g. "tls_cert_file").
type Files struct {
	CertFile, KeyFile string
	CertKey, KeyKey   string
}

// ServerConfig loads the pair and returns the server side of TLS 1.2 and
// later. Every error names the setting and the fix: a missing or unreadable
// file, PEM that holds no certificate or key, a key that is not the
// certificate's, a certificate already expired.
func ServerConfig(f Files, now time.Time) (*tls.Config, error) {
	certPEM, err := readPEM(f.CertFile, f.CertKey, "certificate")
	if err != nil {
		return nil, err
	}
	keyPEM, err := readPEM(f.KeyFile, f.KeyKey, "private key")
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s %s and %s %s do not form a certificate and its key (%w); "+
			"give the PEM certificate in %s and its unencrypted PEM private key in %s, or make a pair with 'weft certs'",
			f.CertKey, f.CertFile, f.KeyKey, f.KeyFile, err, f.CertKey, f.KeyKey)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", f.CertKey, f.CertFile, err)
	}
	if now.After(leaf.NotAfter) {
		return nil, fmt.Errorf("%s %s expired on %s; renew it (for development: 'weft certs --force')",
			f.CertKey, f.CertFile, leaf.NotAfter.UTC().Format(time.DateOnly))
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pair},
		// HTTP/1.1 only on the API listener: connection limits and
		// timeouts are per connection, which HTTP/2 would multiplex.
		NextProtos: []string{"http/1.1"},
	}, nil
}

// readPEM reads a PEM file, naming the setting when it cannot.
func readPEM(path, key, what string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("%s: a %s file is required when TLS is on; set both tls_cert_file and tls_key_file, or neither for plain HTTP", key, what)
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s: %s does not exist; give the path of a PEM %s (for development: 'weft certs')", key, path, what)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return b, nil
}
