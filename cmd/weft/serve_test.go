package main

import (
	"bytes"
	"context"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/syncbuf"
)

var listening = regexp.MustCompile(`listening on (http://\S+) `)

// serveOnce runs `weft serve` on dir until f returns, and returns what it
// printed on stdout and logged on stderr.
func serveOnce(t *testing.T, dir string, f func(url string)) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, log syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--data-dir", dir, "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "127.0.0.1:0"},
			&out, &log, func(string) string { return "" })
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !listening.MatchString(out.String()) {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("serve stopped before listening: %v\n%s", err, log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve not listening after 30s:\n%s", log.String())
		}
	}
	f(listening.FindStringSubmatch(out.String())[1])
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, log.String())
	}
	return out.String(), log.String()
}

// post sends body with the key and fails unless the answer is 200.
func post(t *testing.T, url, key, contentType string, body []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("api", key)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s = %d", url, resp.StatusCode)
	}
}

// TestServeFirstStart: the first start prints the admin key once, on
// stdout and never in the log; a later start prints none. Every file weft
// writes in its data directory is readable by its owner alone, even in a
// directory the operator made open to all.
func TestServeFirstStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the test's umask
		t.Fatal(err)
	}
	var key string
	stdout, stderr := serveOnce(t, dir, func(url string) {
		raw, err := os.ReadFile(filepath.Join(dir, "admin-key"))
		if err != nil {
			t.Fatal(err)
		}
		key = strings.TrimSpace(string(raw))
		post(t, url+"/call/start", key, "application/json", []byte(`{"start":{"project_id":"acme/app","id":"c1","trace_id":"t1",`+
			`"op_name":"op","started_at":"2025-01-01T00:00:00Z","inputs":{"q":"hi"}}}`))
		var form bytes.Buffer
		mw := multipart.NewWriter(&form)
		_ = mw.WriteField("project_id", "acme/app")
		fw, _ := mw.CreateFormFile("file", "notes.txt")
		_, _ = fw.Write([]byte("file content"))
		_ = mw.Close()
		post(t, url+"/file/create", key, mw.FormDataContentType(), form.Bytes())
	})
	if key == "" || strings.Count(stdout, key) != 1 {
		t.Errorf("stdout shows the admin key %d times, want once:\n%s", strings.Count(stdout, key), stdout)
	}
	if strings.Contains(stderr, key) || strings.Contains(stderr, key[len(key)-12:]) {
		t.Errorf("the log carries the admin key:\n%s", stderr)
	}
	var files int
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files++
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 || perm&want != want {
			t.Errorf("%s has mode %v, want %v", strings.TrimPrefix(path, dir), perm, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 4 {
		t.Errorf("found %d files in the data directory; the test wrote too little to check", files)
	}
	stdout, _ = serveOnce(t, dir, func(string) {})
	if strings.Contains(stdout, "admin API key") {
		t.Errorf("a later start printed a key:\n%s", stdout)
	}
}
