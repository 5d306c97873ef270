package app

import (
	"crypto/tls"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/weftdev/weft/internal/tlsutil"
)

// loadTLS reads tls_cert_file and tls_key_file when they are set; without
// them the listeners stay plain text.
func (s *Server) loadTLS() error {
	if s.cfg.TLSCertFile == "" && s.cfg.TLSKeyFile == "" {
		return nil
	}
	cfg, err := tlsutil.ServerConfig(tlsutil.Files{CertFile: s.cfg.TLSCertFile, KeyFile: s.cfg.TLSKeyFile,
		CertKey: "tls_cert_file", KeyKey: "tls_key_file"}, time.Now())
	if err != nil {
		return err
	}
	s.tls = cfg
	return nil
}

// grpcCreds is the OTLP/gRPC listener's TLS, if any. gRPC negotiates h2
// itself, so the API listener's protocol list is left out.
func (s *Server) grpcCreds() []grpc.ServerOption {
	if s.tls == nil {
		return nil
	}
	cfg := s.tls.Clone()
	cfg.NextProtos = nil
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(cfg))}
}

// serveTLS wraps the API listener in TLS when it is configured. The
// connection limit stays underneath, so it counts handshakes too.
func (s *Server) serveTLS(ln net.Listener) net.Listener {
	if s.tls == nil {
		return ln
	}
	return tls.NewListener(ln, s.tls)
}

// Scheme is "https" when the API listener serves TLS, else "http".
func (s *Server) Scheme() string {
	if s.tls == nil {
		return "http"
	}
	return "https"
}
