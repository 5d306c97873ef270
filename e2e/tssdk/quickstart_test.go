package tssdk_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// quickResult is what quickstart.mjs saw through the SDK.
type quickResult struct {
	ProjectID      string `json:"projectId"`
	RenamedCallID  string `json:"renamedCallId"`
	SettingsDigest string `json:"settingsDigest"`
	Requests       []struct {
		Method, URL string
		Starts      []string
		Renames     string
	} `json:"requests"`
}

// TestQuickStartOverTLS runs the SDK's quick start against the weft
// binary as a new user would set it up: weft certs, weft keys create,
// weft serve over TLS, then only WANDB_BASE_URL and WANDB_API_KEY, with
// the certificate trusted through NODE_EXTRA_CA_CERTS, and
// weave.init("quickstart") without an entity.
func TestQuickStartOverTLS(t *testing.T) {
	node := requireNodeDeps(t)
	bin := buildWeft(t)
	data := t.TempDir()
	weftRun(t, bin, "certs", "--data-dir", data)
	cert := filepath.Join(data, "tls", "cert.pem")
	key := lastLine(weftRun(t, bin, "keys", "create", "--data-dir", data, "--entity", "acme", "--user", "quick-user"))
	base := serveTLS(t, bin, data, cert)
	res := runQuickstart(t, node, base, key, cert)

	if res.ProjectID != "acme/quickstart" {
		t.Fatalf("init resolved project %q; want the key's entity, acme/quickstart", res.ProjectID)
	}
	checkQuickstartRequests(t, res, base)
	c := tlsClient(t, base, key, cert)
	checkQuickstartStored(t, c, res)
}

// buildWeft builds cmd/weft into a temporary directory.
func buildWeft(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "weft")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/weft").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// weftRun runs a weft command that exits and returns its stdout.
func weftRun(t *testing.T, bin string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("weft %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// serveTLS starts weft serve with the pair weft certs wrote and returns
// its https base URL once it listens.
func serveTLS(t *testing.T, bin, data, cert string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data-dir", data, "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "",
		"--tls-cert-file", cert, "--tls-key-file", filepath.Join(data, "tls", "key.pem"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, after, ok := strings.Cut(sc.Text(), "listening on "); ok {
				found <- strings.Fields(after)[0]
			}
		}
		close(found)
	}()
	select {
	case base, ok := <-found:
		if !ok || !strings.HasPrefix(base, "https://") {
			t.Fatalf("weft serve did not listen over https (%q); stderr:\n%s", base, stderr.String())
		}
		return base
	case <-time.After(60 * time.Second):
		t.Fatalf("weft serve did not start in 60s; stderr:\n%s", stderr.String())
	}
	return ""
}

// runQuickstart runs quickstart.mjs with only the SDK's two settings and
// the trusted certificate.
func runQuickstart(t *testing.T, node, base, key, cert string) quickResult {
	t.Helper()
	var res quickResult
	runNodeScript(t, node, "quickstart.mjs", &res, "WANDB_BASE_URL="+base, "WANDB_API_KEY="+key, "NODE_EXTRA_CA_CERTS="+cert)
	return res
}

// checkQuickstartRequests: the SDK asked base's GraphQL for the entity
// first, sent every trace request under base/traces, and the rename
// reached weft before the batch that starts the renamed call.
func checkQuickstartRequests(t *testing.T, res quickResult, base string) {
	t.Helper()
	if len(res.Requests) == 0 || res.Requests[0].URL != base+"/graphql" || res.Requests[0].Method != http.MethodPost {
		t.Fatalf("first request %+v; want POST %s/graphql", res.Requests[:min(1, len(res.Requests))], base)
	}
	renameAt, startAt := -1, -1
	for i, r := range res.Requests[1:] {
		if !strings.HasPrefix(r.URL, base+"/traces/") {
			t.Errorf("request %d went to %s, outside %s/traces", i+1, r.URL, base)
		}
		if r.Renames == res.RenamedCallID && renameAt < 0 {
			renameAt = i
		}
		for _, id := range r.Starts {
			if id == res.RenamedCallID && startAt < 0 {
				startAt = i
			}
		}
	}
	if renameAt < 0 || startAt < 0 || renameAt > startAt {
		t.Errorf("rename sent at request %d, the call's start at %d; the test wants the rename first", renameAt, startAt)
	}
}

// client reads what weft stored over the same TLS, trusting only the
// development certificate.
func tlsClient(t *testing.T, base, key, cert string) *client {
	t.Helper()
	pem, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("weft certs wrote no PEM certificate")
	}
	return &client{t: t, base: base, key: key, http: &http.Client{Timeout: time.Minute,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}}
}

// checkQuickstartStored reads back, from the server side, the calls and
// the object the quick start made.
func checkQuickstartStored(t *testing.T, c *client, res quickResult) {
	t.Helper()
	calls := c.callsOf("/traces", "acme/quickstart")
	greets, shouts := withOp(calls, "greet"), withOp(calls, "shout")
	if len(greets) != 2 || len(shouts) != 2 {
		t.Fatalf("%d greet and %d shout calls; want 2 each", len(greets), len(shouts))
	}
	for _, g := range greets {
		if kids := childrenOf(calls, g, "shout"); len(kids) != 1 {
			t.Errorf("greet %s has %d shout children", g.str("id"), len(kids))
		}
		want := ""
		if g.str("id") == res.RenamedCallID {
			want = "renamed right after start"
		}
		if g.str("display_name") != want || g.str("wb_user_id") != "quick-user" {
			t.Errorf("greet %s: display_name %q, wb_user_id %q; want %q, quick-user", g.str("id"), g.str("display_name"), g.str("wb_user_id"), want)
		}
	}
	status, out := c.post("/traces/obj/read", map[string]any{"project_id": "acme/quickstart", "object_id": "settings", "digest": res.SettingsDigest})
	if want := `"val":{"temperature":0.2,"model":"fake-model","tags":["b","a"]}`; status != http.StatusOK || !bytes.Contains(out, []byte(want)) {
		t.Errorf("obj/read = %d %s; want it to hold %s", status, out, want)
	}
}
