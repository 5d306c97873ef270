package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/kafkatest"
)

// nobody is the unprivileged user the agent runs as in this test.
const nobody = 65534

// TestAgentAsNonRootFullBufferAnswers429 runs the agent as an unprivileged
// user whose only writable directory is its buffer (working directory /,
// no home, no temp dir), checks its idle memory, and fills its 4 MiB
// buffer while the upstream is away: past the bound the Weave and OTLP
// endpoints answer 429 with Retry-After, and the buffer stays bounded.
func TestAgentAsNonRootFullBufferAnswers429(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("this test starts the agent as another user and needs root, which CI has")
		}
		t.Skip("needs root to start the agent as another user")
	}
	root, err := os.MkdirTemp("", "weft-agent-nonroot")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	dataDir := filepath.Join(root, "data")
	conf := filepath.Join(root, "agent.yaml")
	must(t, os.WriteFile(conf, []byte("agent:\n  max_buffer_bytes: 4194304\n"), 0o644))
	must(t, os.Mkdir(dataDir, 0o700))
	must(t, os.Chown(dataDir, nobody, nobody))
	must(t, os.Chmod(root, 0o755))
	must(t, os.Chmod(filepath.Dir(binary(t)), 0o755))

	cmd := exec.Command(binary(t), "agent", "--config", conf, "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "",
		"--data-dir", dataDir, "--upstream", "http://"+kafkatest.DeadAddr(t))
	cmd.Dir = "/"
	cmd.Env = []string{"HOME=/nonexistent", "TMPDIR=/nonexistent", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	agent := startWeftCmd(t, cmd)

	time.Sleep(time.Second)
	rss := residentBytes(t, agent.cmd.Process.Pid)
	// The idle agent is the weft binary's pages touched at start (the
	// embedded store's static initialisers among them), about 50 MiB,
	// and a few MiB of heap.
	if rss > 64<<20 {
		t.Errorf("idle agent RSS = %d MiB, want under 64 MiB", rss>>20)
	}
	t.Logf("idle agent RSS: %.1f MiB", float64(rss)/(1<<20))
	c := newClient(t, agent.URL, "weft-some-key")
	status, resp := fillBuffer(t, c)
	if status != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("writing to a full buffer = %d (Retry-After %q), want 429 with Retry-After", status, resp.Header.Get("Retry-After"))
	}
	otlp, err := http.NewRequest(http.MethodPost, agent.URL+"/otel/v1/traces", strings.NewReader(""))
	must(t, err)
	otlp.Header.Set("Content-Type", "application/x-protobuf")
	otlp.Header.Set("wandb-api-key", "weft-some-key")
	r, err := http.DefaultClient.Do(otlp)
	must(t, err)
	r.Body.Close()
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("OTLP export to a full buffer = %d (Retry-After %q), want 429 with Retry-After", r.StatusCode, r.Header.Get("Retry-After"))
	}
	if size := treeSize(t, dataDir); size > 4<<20 {
		t.Fatalf("the agent's data dir holds %d bytes, above its 4 MiB buffer", size)
	}
}

// fillBuffer posts incompressible calls until the agent refuses one, and
// returns that answer.
func fillBuffer(t *testing.T, c *client) (int, *http.Response) {
	t.Helper()
	for i := range 200 {
		text := make([]byte, 128<<10)
		for j := range text {
			text[j] = 'a' + byte(rand.N(26))
		}
		body := fmt.Sprintf(`{"batch":[{"mode":"start","req":{"start":{"project_id":"acme/full","id":"f%d","trace_id":"t",
			"op_name":"op","started_at":"2025-01-01T00:00:00Z","attributes":{},"inputs":{"t":"%s"}}}}]}`, i, text)
		req, err := http.NewRequest(http.MethodPost, c.base+"/call/upsert_batch", bytes.NewReader([]byte(body)))
		must(t, err)
		req.Header.Set("Authorization", "Bearer "+c.key)
		resp, err := c.http.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return resp.StatusCode, resp
		}
	}
	t.Fatal("200 calls of 128 KiB were all acknowledged by a 4 MiB buffer")
	return 0, nil
}

// residentBytes reads a process's resident set size from /proc.
func residentBytes(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(t, err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			must(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

func treeSize(t *testing.T, dir string) int64 {
	var n int64
	must(t, filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return err
	}))
	return n
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
