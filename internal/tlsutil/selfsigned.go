package tlsutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"strings"
	"time"
)

// SelfSignedValidity is how long a development certificate lasts: under
// the 398 days clients accept for a server certificate.
const SelfSignedValidity = 397 * 24 * time.Hour

// DefaultHosts are the names a development certificate covers when none
// are given: the loopback names an SDK on the same machine uses.
var DefaultHosts = []string{"localhost", "127.0.0.1", "::1"}

// Pair is a PEM certificate and its PEM private key.
type Pair struct {
	CertPEM, KeyPEM []byte
	NotAfter        time.Time
}

// SelfSigned makes an ECDSA P-256 certificate for hosts (DNS names or IP
// addresses) that is its own issuer. It is marked as a CA so that adding
// the one file to a trust store (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE,
// curl --cacert) is all a client needs; it can sign nothing else, as its
// path length is zero.
func SelfSigned(hosts []string, now time.Time) (Pair, error) {
	if len(hosts) == 0 {
		hosts = DefaultHosts
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return Pair{}, fmt.Errorf("serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"Weft development"}, CommonName: "weft " + hosts[0]},
		NotBefore:             now.Add(-time.Hour), // clocks of clients on other machines may lag
		NotAfter:              now.Add(SelfSignedValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	if err := addHosts(tmpl, hosts); err != nil {
		return Pair{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return Pair{}, fmt.Errorf("sign certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, fmt.Errorf("encode key: %w", err)
	}
	return Pair{
		CertPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		NotAfter: tmpl.NotAfter,
	}, nil
}

// addHosts puts each host in the certificate's subject alternative names.
func addHosts(c *x509.Certificate, hosts []string) error {
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		switch ip := net.ParseIP(h); {
		case ip != nil:
			c.IPAddresses = append(c.IPAddresses, ip)
		case validDNSName(h):
			c.DNSNames = append(c.DNSNames, h)
		default:
			return fmt.Errorf("host %q is neither an IP address nor a DNS name (letters, digits, '-', '.', a leading '*.')", h)
		}
	}
	return nil
}

func validDNSName(h string) bool {
	h = strings.TrimPrefix(h, "*.")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}
