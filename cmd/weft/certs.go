package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/internal/tlsutil"
)

// hostList is a repeatable --host flag.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*h = append(*h, part)
		}
	}
	return nil
}

// certs writes a self-signed certificate and key for local development
// into <data_dir>/tls (or --dir) and prints how to serve and trust it.
func certs(_ context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs, settings := settingsFlags("certs", config.AdminFlags, stderr, getenv)
	var hosts hostList
	fs.Var(&hosts, "host", "DNS name or IP address the certificate covers; repeat or comma-separate (default localhost, 127.0.0.1, ::1)")
	dir := fs.String("dir", "", "where to write cert.pem and key.pem (default <data_dir>/tls)")
	force := fs.Bool("force", false, "replace an existing pair")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("certs: unexpected argument %q (names go in --host)", fs.Arg(0))
	}
	cfg, err := settings.Config()
	if err != nil {
		return err
	}
	if *dir == "" {
		*dir = filepath.Join(cfg.DataDir, "tls")
	}
	if len(hosts) == 0 {
		hosts = tlsutil.DefaultHosts
	}
	pair, err := tlsutil.SelfSigned(hosts, time.Now())
	if err != nil {
		return fmt.Errorf("certs: --host: %w", err)
	}
	certFile, keyFile, err := writePair(*dir, pair, *force)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	return certsHelp.Execute(stdout, map[string]any{"Cert": certFile, "Key": keyFile, "Hosts": strings.Join(hosts, ", "),
		"Until": pair.NotAfter.Format(time.DateOnly), "Host": hostForURL(hosts[0]), "Port": listenPort(cfg.Listen)})
}

// writePair writes cert.pem (0644) and key.pem (0600) into dir and
// returns their absolute paths. Existing files are kept unless force.
func writePair(dir string, p tlsutil.Pair, force bool) (certFile, keyFile string, err error) {
	if dir, err = filepath.Abs(dir); err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if !force {
		for _, f := range []string{certFile, keyFile} {
			if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
				return "", "", fmt.Errorf("%s exists; pass --force to replace it, or --dir for another place", f)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	if err := writeFileMode(keyFile, p.KeyPEM, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, writeFileMode(certFile, p.CertPEM, 0o644)
}

// writeFileMode writes b with mode perm, also when the file existed with
// a wider mode.
func writeFileMode(path string, b []byte, perm os.FileMode) error {
	if err := os.WriteFile(path, b, perm); err != nil {
		return err
	}
	return os.Chmod(path, perm)
}

// listenPort is the port of the listen setting ("PORT" if it has none).
func listenPort(listen string) string {
	if _, port, err := net.SplitHostPort(listen); err == nil && port != "" {
		return port
	}
	return "PORT"
}

// hostForURL brackets an IPv6 address.
func hostForURL(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

var certsHelp = template.Must(template.New("certs").Parse(`Wrote a self-signed certificate for {{.Hosts}}, valid until {{.Until}}:
  certificate  {{.Cert}}
  private key  {{.Key}} (mode 0600, keep it private)

Serve over TLS (HTTP API and OTLP/gRPC):
  weft serve --tls-cert-file {{.Cert}} --tls-key-file {{.Key}}
  or in weft.yaml:
    tls_cert_file: {{.Cert}}
    tls_key_file: {{.Key}}

Trust it where the clients run (it is its own authority; nothing else trusts it):
  Weave TypeScript SDK (Node):  export NODE_EXTRA_CA_CERTS={{.Cert}}
  Weave Python SDK:             export SSL_CERT_FILE={{.Cert}} REQUESTS_CA_BUNDLE={{.Cert}}
  curl:                         curl --cacert {{.Cert}} https://{{.Host}}:{{.Port}}/health
Then point the SDKs at weft by host name or address the certificate covers:
  export WANDB_BASE_URL=https://{{.Host}}:{{.Port}}
`))
