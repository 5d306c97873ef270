package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// command is a binary of this module built once per test run.
type command struct {
	pkg  string // relative to e2e
	once sync.Once
	path string
	err  error
}

var weftCommand = command{pkg: "../cmd/weft"}

// build returns the binary, building it on first use.
func (c *command) build(t *testing.T) string {
	t.Helper()
	c.once.Do(func() {
		dir, err := os.MkdirTemp("", "weft-e2e-bin")
		if err != nil {
			c.err = err
			return
		}
		c.path = filepath.Join(dir, filepath.Base(c.pkg))
		if out, err := exec.Command("go", "build", "-o", c.path, c.pkg).CombinedOutput(); err != nil {
			c.err = fmt.Errorf("go build %s: %v\n%s", c.pkg, err, out)
		}
	})
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.path
}

// binary builds cmd/weft once per test run.
func binary(t *testing.T) string { return weftCommand.build(t) }

// process is a running weft serve.
type process struct {
	cmd      *exec.Cmd
	URL      string
	AdminKey string
	stderr   *syncBuffer
	done     chan error    // Wait's result, for a test to take once
	exited   chan struct{} // closed once Wait has returned
}

// startWeft runs `weft serve` on dataDir with a free port and waits until
// it prints its address.
func startWeft(t *testing.T, dataDir string, extraArgs ...string) *process {
	t.Helper()
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "", "--data-dir", dataDir}, extraArgs...)
	p := startWeftArgs(t, args)
	if p.AdminKey == "" {
		key, err := os.ReadFile(filepath.Join(dataDir, "admin-key"))
		if err != nil {
			t.Fatal(err)
		}
		p.AdminKey = strings.TrimSpace(string(key))
	}
	return p
}

// startWeftArgs runs weft with args and waits until it prints its address.
func startWeftArgs(t *testing.T, args []string) *process {
	t.Helper()
	return startWeftCmd(t, exec.Command(binary(t), args...))
}

// startWeftCmd starts cmd, a weft command, and waits until it prints its
// address.
func startWeftCmd(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1), exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		close(p.exited)
		p.done <- err
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(60 * time.Second)
	for p.URL == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("weft exited before listening; stderr:\n%s", p.stderr)
			}
			if strings.HasPrefix(line, KeyPrefix) {
				p.AdminKey = line
			}
			if _, after, ok := strings.Cut(line, "listening on "); ok {
				p.URL = strings.Fields(after)[0]
			}
		case <-timeout:
			t.Fatalf("weft did not start in 60s; stderr:\n%s", p.stderr)
		}
	}
	go func() {
		for range lines {
		}
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s %s stderr (a crash, or the last 8 KB):\n%s", filepath.Base(cmd.Path), cmd.Args[1], p.stderr.excerpt(8192))
			keepLog(t, filepath.Base(cmd.Path)+"-"+cmd.Args[1], p.stderr.String())
		}
	})
	return p
}

// keepLog writes a failed test's whole process log into the directory
// WEFT_E2E_LOGDIR names, when it is set: a crash report's goroutine dump
// is longer than a test log should show.
func keepLog(t *testing.T, name, log string) {
	dir := os.Getenv("WEFT_E2E_LOGDIR")
	if dir == "" {
		return
	}
	f, err := os.CreateTemp(dir, strings.NewReplacer("/", "_").Replace(t.Name())+"-"+name+"-*.log")
	if err != nil {
		t.Logf("keep log: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(log); err != nil {
		t.Logf("keep log: %v", err)
		return
	}
	t.Logf("whole log kept in %s", f.Name())
}

// KeyPrefix starts every key weft issues.
const KeyPrefix = "weft-"

// kill stops the process unless it has exited, and waits for it, so its
// log is complete when read.
func (p *process) kill() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// client sends authenticated JSON requests.
type client struct {
	t    *testing.T
	base string
	key  string
	http *http.Client
}

func newClient(t *testing.T, base, key string) *client {
	return &client{t: t, base: base, key: key, http: &http.Client{Timeout: 60 * time.Second}}
}

// post sends body (marshalled unless []byte) and returns status and body.
func (c *client) post(path string, body any) (int, []byte) {
	c.t.Helper()
	return c.do(http.MethodPost, path, body)
}

// tryPost is post for background goroutines: it reports transport errors
// instead of failing the test.
func (c *client) tryPost(path string, raw []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPost, c.base+path, bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// mustPost fails the test unless the answer is 200 and decodes it into v.
func (c *client) mustPost(path string, body, v any) {
	c.t.Helper()
	status, out := c.post(path, body)
	if status != http.StatusOK {
		c.t.Fatalf("POST %s = %d: %s", path, status, out)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			c.t.Fatalf("POST %s: decoding %s: %v", path, out, err)
		}
	}
}
