package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCertsCommand runs weft certs as a user would and reads back what it
// wrote and printed.
func TestCertsCommand(t *testing.T) {
	tests := []struct {
		name      string
		args      []string // after "certs --data-dir DIR"
		pre       bool     // a pair exists already
		wantErr   string
		wantNames []string
		wantOut   []string
	}{
		{name: "defaults", wantNames: []string{"localhost", "127.0.0.1", "::1"},
			wantOut: []string{"NODE_EXTRA_CA_CERTS=", "SSL_CERT_FILE=", "--tls-cert-file", "tls_key_file:", "https://localhost:7000"}},
		{name: "hosts", args: []string{"--host", "weft.internal", "--host", "10.1.2.3,localhost"},
			wantNames: []string{"weft.internal", "10.1.2.3", "localhost"}, wantOut: []string{"https://weft.internal:7000"}},
		{name: "existing pair kept", pre: true, wantErr: "--force"},
		{name: "existing pair replaced", pre: true, args: []string{"--force"}, wantNames: []string{"localhost", "127.0.0.1", "::1"}},
		{name: "bad host", args: []string{"--host", "not a host"}, wantErr: "--host"},
		{name: "stray argument", args: []string{"localhost"}, wantErr: "--host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			base := []string{"certs", "--data-dir", data}
			env := map[string]string{"WEFT_LISTEN": "127.0.0.1:7000"}
			if tt.pre {
				mustRunWeft(t, env, base...)
			}
			out, err := runWeft(t, env, append(base, tt.args...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v; want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkWrittenPair(t, filepath.Join(data, "tls"), tt.wantNames)
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// checkWrittenPair wants a certificate in dir covering names and a key
// only its owner may read.
func checkWrittenPair(t *testing.T, dir string, names []string) {
	t.Helper()
	cert := readCert(t, filepath.Join(dir, "cert.pem"))
	covered := append([]string(nil), cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		covered = append(covered, ip.String())
	}
	for _, n := range names {
		if !slices.Contains(covered, n) {
			t.Errorf("certificate names %v lack %q", covered, n)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "key.pem")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, %v; want mode 0600", err, st)
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
