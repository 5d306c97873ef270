package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftdev/weft/inference/upstreamtest"
)

// trainBase is the base model every training test trains.
const trainBase = "OpenPipe/Qwen3-14B-Instruct"

var exampleCommand = command{pkg: "../cmd/weft-example-trainer"}

// exampleTrainer builds cmd/weft-example-trainer once per test run.
func exampleTrainer(t *testing.T) string { return exampleCommand.build(t) }

// trainingWeft is a running weft that trains, with a fake LoRA server
// behind its gateway and keys for acme.
type trainingWeft struct {
	weft   *process
	lora   *upstreamtest.Server
	member string
	worker string
}

// trainingConfig is a weft config with trainable models, short leases
// and the LoRA server as the checkpoints' upstream.
func trainingConfig(t *testing.T, lora string) string {
	t.Helper()
	cfg := fmt.Sprintf(`
training:
  base_models: [%s]
  lease_ttl: 2s
  max_attempts: 3
inference:
  providers:
    - {name: lora, base_url: %q}
  lora:
    upstreams: [{provider: lora}]
`, trainBase, lora)
	path := filepath.Join(t.TempDir(), "weft.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startTrainingWeft(t *testing.T) *trainingWeft {
	t.Helper()
	lora := upstreamtest.New(upstreamtest.Options{Record: true})
	t.Cleanup(lora.Close)
	dir := t.TempDir()
	p := startWeft(t, dir, "--config", trainingConfig(t, lora.BaseURL()))
	w := &trainingWeft{weft: p, lora: lora, member: cliKey(t, "--data-dir", dir, "member"), worker: cliKey(t, "--data-dir", dir, "worker")}
	c := newClient(t, p.URL, w.member)
	eventually(t, func() bool { s, _ := c.do(http.MethodGet, "/v1/preview/base-models", nil); return s == http.StatusOK })
	return w
}

// cliKey creates a key of acme with role through weft keys create, on the
// store the flag names (--data-dir DIR or --clickhouse-dsn DSN).
func cliKey(t *testing.T, storeFlag, store, role string) string {
	t.Helper()
	out, err := exec.Command(binary(t), "keys", "create", storeFlag, store, "--entity", "acme", "--role", role).CombinedOutput()
	if err != nil {
		t.Fatalf("keys create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// trainerProc is a running `weft trainer`.
type trainerProc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan error
}

// startTrainer runs weft trainer against url with the example command
// and its extra flags.
func startTrainer(t *testing.T, url, key, name string, exampleFlags ...string) *trainerProc {
	t.Helper()
	return startTrainerCommand(t, url, key, name, strings.Join(append([]string{exampleTrainer(t)}, exampleFlags...), " "))
}

// startTrainerCommand runs weft trainer with any command.
func startTrainerCommand(t *testing.T, url, key, name, command string) *trainerProc {
	t.Helper()
	cmd := exec.Command(binary(t), "trainer", "--url", url, "--key", key, "--worker", name, "--wait", "2s",
		"--kill-grace", "1s", "--work-dir", t.TempDir(), "--command", command)
	tp := &trainerProc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = tp.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { tp.done <- cmd.Wait() }()
	t.Cleanup(func() { tp.stop(t) })
	return tp
}

// stop ends the trainer with SIGTERM, as an operator would.
func (tp *trainerProc) stop(t *testing.T) {
	if tp.cmd.ProcessState != nil {
		return
	}
	_ = tp.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-tp.done:
	case <-time.After(10 * time.Second):
		_ = tp.cmd.Process.Kill()
		<-tp.done
		t.Errorf("weft trainer did not stop on SIGTERM; its log:\n%s", tp.stderr)
	}
}

// kill ends the trainer with SIGKILL, as a machine that dies would.
func (tp *trainerProc) kill() {
	_ = tp.cmd.Process.Kill()
	<-tp.done
}

// artClient sends the training API's requests the way OpenPipe ART's
// client does: JSON bodies and a Bearer key.
type artClient struct {
	t    *testing.T
	base string
	key  string
	http *http.Client
}

func newART(t *testing.T, base, key string) *artClient {
	return &artClient{t: t, base: base + "/v1", key: key, http: &http.Client{Timeout: 30 * time.Second}}
}

// call sends method path with body (nil: none) and decodes an answer of
// status want into v.
func (a *artClient) call(method, path string, body, v any, want int) {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.base+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		a.t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, out, want)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			a.t.Fatalf("%s %s: %v in %s", method, path, err, out)
		}
	}
}

// trajectoryGroups is n groups of two trajectories, as ART serializes
// them, with mean rewards 0.5, 0.75, 1, ...
func trajectoryGroups(n int) []any {
	var gs []any
	for i := range n {
		var ts []any
		for j, r := range []float64{0.25 * float64(i%3), 1} {
			ts = append(ts, map[string]any{
				"messages_and_choices": []any{
					map[string]any{"role": "system", "content": "You answer questions about email."},
					map[string]any{"role": "user", "content": fmt.Sprintf("question %d.%d", i, j)},
					map[string]any{"finish_reason": "stop", "index": 0, "logprobs": nil,
						"message": map[string]any{"role": "assistant", "content": "an answer", "tool_calls": nil}},
				},
				"tools": nil, "additional_histories": []any{}, "reward": r, "initial_policy_version": nil,
				"final_policy_version": nil, "metrics": map[string]any{"correct": r > 0.5}, "auto_metrics": map[string]any{},
				"metadata": map[string]any{"scenario": i}, "logs": []any{}})
		}
		gs = append(gs, map[string]any{"trajectories": ts, "metadata": map[string]any{}, "metrics": map[string]any{},
			"logs": []any{}, "exceptions": []any{}})
	}
	return gs
}
