package tssdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
)

const (
	project     = "acme/tssdk"
	sdkUser     = "ts-user"
	sdkVersion  = "0.11.1" // pinned in package.json and package-lock.json
	scriptLimit = 3 * time.Minute
)

// scriptResult is what script.mjs saw through the SDK.
type scriptResult struct {
	PNGBase64      string           `json:"pngBase64"`
	SettingsDigest string           `json:"settingsDigest"`
	DatasetDigest  string           `json:"datasetDigest"`
	RowsBack       []map[string]any `json:"rowsBack"`
	EvalSummary    map[string]any   `json:"evalSummary"`
	CallIDs        []string         `json:"callIds"`
	RootOps        []string         `json:"rootOps"`
	PipelineRootID string           `json:"pipelineRootId"`
}

// TestWeaveTypeScriptSDK runs the real SDK against weft and checks from
// the server side what the script did.
func TestWeaveTypeScriptSDK(t *testing.T) {
	node := requireNodeDeps(t)
	url, key, otherKey, logs := startWeft(t)
	res := runScript(t, node, url, key)
	c := &client{t: t, base: url, key: key}
	calls := c.calls()
	t.Run("nested ops with an exception", func(t *testing.T) { checkPipeline(t, calls, res) })
	t.Run("published object", func(t *testing.T) { checkSettings(t, c, res) })
	t.Run("dataset rows", func(t *testing.T) { checkDataset(t, c, res) })
	t.Run("image", func(t *testing.T) { checkImage(t, c, calls, res) })
	t.Run("evaluation", func(t *testing.T) { checkEvaluation(t, c, calls, res) })
	t.Run("feedback", func(t *testing.T) { checkFeedback(t, c, calls) })
	t.Run("calls read back", func(t *testing.T) { checkCallsReadBack(t, calls, res) })
	t.Run("other entity sees nothing", func(t *testing.T) {
		checkIsolation(t, &client{t: t, base: url, key: otherKey}, res)
	})
	if errs := logs.errors(); errs != "" {
		t.Errorf("weft logged errors while serving the SDK:\n%s", errs)
	}
}

// requireNodeDeps finds node and the pinned SDK; their absence fails the
// test with the command that installs them.
func requireNodeDeps(t *testing.T) string {
	t.Helper()
	return requireNodePackage(t, "weave", sdkVersion)
}

// requireNodePackage finds node and the npm package name at version in
// e2e/tssdk/node_modules.
func requireNodePackage(t *testing.T, name, version string) string {
	t.Helper()
	const fix = "run scripts/install-node-deps.sh from the repository root"
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: %v; %s", err, fix)
	}
	raw, err := os.ReadFile(filepath.Join("node_modules", name, "package.json"))
	if err != nil {
		t.Fatalf("the %s npm package is not installed in e2e/tssdk/node_modules (%v); %s", name, err, fix)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(raw, &pkg); err != nil || pkg.Version != version {
		t.Fatalf("e2e/tssdk/node_modules has %s %q, want %s (%v); %s", name, pkg.Version, version, err, fix)
	}
	return node
}

// startWeft serves a fresh weft and returns its URL, a member key of the
// project's entity, an admin key of another entity and the server's log.
func startWeft(t *testing.T) (url, key, otherKey string, logs *logBuffer) {
	url, newKey, logs := serveWeft(t)
	return url, newKey("acme", auth.RoleMember, sdkUser), newKey("rival", auth.RoleAdmin, "rival-user"), logs
}

// keyMaker stores a new key and returns its secret.
type keyMaker func(entity string, role auth.Role, user string) string

// serveWeft serves a fresh weft configured by mutate and returns its URL,
// a key maker and the server's log.
func serveWeft(t *testing.T, mutate ...func(*config.Config)) (string, keyMaker, *logBuffer) {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	for _, m := range mutate {
		m(&cfg)
	}
	logs := &logBuffer{}
	ctx := context.Background()
	srv, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	newKey := func(entity string, role auth.Role, user string) string {
		k, secret, err := auth.NewKey(entity, role, user, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Keys().PutKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		return secret
	}
	return hs.URL, newKey, logs
}

// runScript runs script.mjs and decodes what it saw.
func runScript(t *testing.T, node, url, key string) scriptResult {
	t.Helper()
	var res scriptResult
	runNodeScript(t, node, "script.mjs", &res, "WANDB_API_KEY="+key, "WF_TRACE_SERVER_URL="+url, "WEFT_PROJECT="+project)
	return res
}

// runNodeScript runs a script of this directory with env and nothing else
// but PATH, a HOME of its own and WEFT_RESULT_FILE, where the script
// writes what it saw; it decodes that into result. A non-zero exit,
// anything on stderr or a weaveErrors.log (failed requests) fails the
// test.
func runNodeScript(t *testing.T, node, name string, result any, env ...string) {
	t.Helper()
	script, err := filepath.Abs(name)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	resultFile := filepath.Join(work, "result.json")
	ctx, cancel := context.WithTimeout(context.Background(), scriptLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = work // the SDK writes weaveErrors.log into the working directory
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "WEAVE_PRINT_CALL_LINK=false",
		"WEFT_RESULT_FILE=" + resultFile}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", name, err, stdout.String(), stderr.String())
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Errorf("the SDK wrote warnings or errors to stderr%s:\n%s", failedRequests(s), s)
	}
	if log, err := os.ReadFile(filepath.Join(work, "weaveErrors.log")); err == nil {
		t.Errorf("the SDK logged failed requests to weaveErrors.log:\n%s", log)
	}
	raw, err := os.ReadFile(resultFile)
	if err != nil {
		t.Fatalf("%s wrote no result: %v\nstdout:\n%s", name, err, stdout.String())
	}
	if err := json.Unmarshal(raw, result); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
}

// failedRequests summarises the failed responses the SDK printed (it
// logs whole Response objects), e.g. " (failed: /file/create 404 x3)".
func failedRequests(stderr string) string {
	var status string
	counts := map[string]int{}
	var order []string
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "status: "); ok {
			status = strings.TrimSuffix(v, ",")
		}
		if v, ok := strings.CutPrefix(line, "url: '"); ok && status != "" {
			u, err := neturl.Parse(strings.TrimRight(v, "',"))
			if err != nil {
				continue
			}
			key := u.Path + " " + status
			if counts[key] == 0 {
				order = append(order, key)
			}
			counts[key]++
			status = ""
		}
	}
	if len(order) == 0 {
		return ""
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s x%d", k, counts[k])
	}
	return " (failed: " + strings.Join(parts, ", ") + ")"
}

// logBuffer collects the server's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// errors returns the ERROR lines logged so far.
func (l *logBuffer) errors() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if strings.Contains(line, "level=ERROR") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func TestFailedRequestsSummary(t *testing.T) {
	dump := func(status int, path string) string {
		return fmt.Sprintf("Error saving file: Response {\n  status: %d,\n  statusText: 'x',\n  url: 'http://127.0.0.1:1%s'\n}\n", status, path)
	}
	tests := []struct{ stderr, want string }{
		{"", ""},
		{"(node:1) Warning: something\n", ""},
		{dump(404, "/file/create") + dump(404, "/file/create") + dump(500, "/feedback/create"),
			" (failed: /file/create 404 x2, /feedback/create 500 x1)"},
	}
	for _, tt := range tests {
		if got := failedRequests(tt.stderr); got != tt.want {
			t.Errorf("failedRequests(%q) = %q; want %q", tt.stderr, got, tt.want)
		}
	}
}
