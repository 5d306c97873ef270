package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/inference/upstreamtest"
)

// TestScaleOutRateLimit runs two gateway replicas on one ClickHouse: one
// project limit holds over both within the documented bound, each
// replica refuses once the other's requests used it up, and a limit set
// through one replica's admin API reaches the other.
func TestScaleOutRateLimit(t *testing.T) {
	const limit, syncInterval, pace = 20, 100 * time.Millisecond, 20 * time.Millisecond
	up := upstreamtest.New(upstreamtest.Options{})
	t.Cleanup(up.Close)
	kafka, ch := devstack(t)
	dsn := ch + "/weft"
	cfg := writeRoleConfig(t, fmt.Sprintf(`inference:
  limits_sync_interval: %s
  providers: [{name: local, base_url: %q}]
  models: [{id: m, upstreams: [{provider: local, model: echo}]}]
  limits: [{project: acme/app, requests_per_minute: %d}]
`, syncInterval, up.BaseURL(), limit))
	replicas := []*process{startRoleWith(t, cfg, "ingest,process,query", kafka, dsn), startRoleWith(t, cfg, "ingest,process,query", kafka, dsn)}
	member, admin := createKey(t, dsn), instanceAdminKey(t, dsn)
	chat := func(r *process, project string) (int, http.Header) {
		body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
		req, _ := http.NewRequest(http.MethodPost, r.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+member)
		req.Header.Set("Service-Project", project)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header
	}
	// The burst must fit in one minute: start it early in one.
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 30*time.Second {
		time.Sleep(left + time.Second)
	}
	admitted := 0
	for i := range 3 * limit {
		switch status, _ := chat(replicas[i%2], "acme/app"); status {
		case http.StatusOK:
			admitted++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("request %d: %d", i, status)
		}
		time.Sleep(pace)
	}
	// Two replicas: one replica's requests in a sync interval (and the
	// read that follows it) may go unseen by the other.
	bound := limit + 2*int(syncInterval/(2*pace)) + 1
	t.Logf("two replicas admitted %d of %d requests under a limit of %d (bound %d)", admitted, 3*limit, limit, bound)
	if admitted < limit || admitted > bound {
		t.Fatalf("two replicas admitted %d requests in a minute; the limit is %d, the bound %d", admitted, limit, bound)
	}
	for i, r := range replicas {
		if status, h := chat(r, "acme/app"); status != http.StatusTooManyRequests || h.Get("x-ratelimit-remaining-requests") != "0" {
			t.Fatalf("replica %d after the burst: %d remaining %q", i, status, h.Get("x-ratelimit-remaining-requests"))
		}
	}

	// The admin API on one replica reaches the other within a sync.
	put, _ := json.Marshal(map[string]any{"limits": []any{map[string]any{"project": "acme/other", "requests_per_minute": 1}}})
	req, _ := http.NewRequest(http.MethodPut, replicas[0].URL+"/inference/limits", bytes.NewReader(put))
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /inference/limits = %d %s", resp.StatusCode, out)
	}
	waitFor(t, 10*time.Second, "the other replica to follow the stored limits", func() bool {
		status, h := chat(replicas[1], "acme/other")
		return status == http.StatusOK && h.Get("x-ratelimit-limit-requests") == "1" || status == http.StatusTooManyRequests
	})
	if status, _ := chat(replicas[1], "acme/app"); status != http.StatusOK {
		t.Fatalf("acme/app after its limit was replaced: %d", status)
	}
}

// instanceAdminKey makes an admin key of every entity with the CLI.
func instanceAdminKey(t *testing.T, dsn string) string {
	t.Helper()
	out, err := exec.Command(binary(t), "keys", "create", "--clickhouse-dsn", dsn, "--entity", "*", "--role", "admin").CombinedOutput()
	if err != nil {
		t.Fatalf("keys create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
