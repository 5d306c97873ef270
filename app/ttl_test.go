package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/config"
)

// TestTTLSettingsTakeEffect: a retention set through the API is read back,
// and stamps expire_at on the calls that start after it, while a call
// that started before keeps the configured retention.
func TestTTLSettingsTakeEffect(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Retention.Default = 36 * time.Hour })
	read := func(key string) string {
		t.Helper()
		status, _, out := e.do(http.MethodPost, "/project/ttl_settings/read", key, map[string]any{"project_id": "acme/app"})
		if status != http.StatusOK {
			t.Fatalf("read = %d %s", status, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := read(e.viewer); got != `{"retention_days":2}` {
		t.Errorf("configured 36h reads %s; want 2 days, rounded up", got)
	}
	for _, tc := range []struct {
		name   string
		key    string
		body   map[string]any
		status int
	}{
		{"a member may not change it", e.member, map[string]any{"project_id": "acme/app", "retention_days": 5}, 403},
		{"zero days", e.admin, map[string]any{"project_id": "acme/app", "retention_days": 0}, 400},
		{"too many days", e.admin, map[string]any{"project_id": "acme/app", "retention_days": 1 << 20}, 400},
		{"another entity", e.evil, map[string]any{"project_id": "acme/app", "retention_days": 5}, 403},
	} {
		status, _, out := e.do(http.MethodPost, "/project/ttl_settings/update", tc.key, tc.body)
		if status != tc.status && !(tc.status == 400 && status == 422) {
			t.Errorf("%s: %d %s; want %d", tc.name, status, out, tc.status)
		}
		if tc.status == 400 && !strings.Contains(string(out), "retention_days") {
			t.Errorf("%s: %s does not name retention_days", tc.name, out)
		}
	}

	changed := time.Now().UTC()
	status, _, out := e.do(http.MethodPost, "/project/ttl_settings/update", e.admin, map[string]any{"project_id": "acme/app", "retention_days": 5})
	if status != http.StatusOK || strings.TrimSpace(string(out)) != `{"retention_days":5}` {
		t.Fatalf("update = %d %s", status, out)
	}
	if got := read(e.viewer); got != `{"retention_days":5}` {
		t.Errorf("after the update reads %s; want 5", got)
	}
	before, after := changed.Add(-time.Hour), changed.Add(time.Minute)
	for id, at := range map[string]time.Time{"before": before, "after": after} {
		s := startBody(id, "", "op", at.Format(time.RFC3339Nano))
		s["trace_id"] = "t-" + id
		e.ok("/call/start", map[string]any{"start": s}, nil)
	}
	expiry := map[string]string{}
	_, _, body := e.do(http.MethodPost, "/calls/stream_query", e.member, map[string]any{"project_id": "acme/app"})
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		var c struct {
			ID       string  `json:"id"`
			ExpireAt *string `json:"expire_at"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.ExpireAt != nil {
			expiry[c.ID] = *c.ExpireAt
		}
	}
	for id, want := range map[string]time.Time{"before": before.Add(36 * time.Hour), "after": after.Add(5 * 24 * time.Hour)} {
		got, err := time.Parse(time.RFC3339Nano, expiry[id])
		if err != nil || got.Sub(want).Abs() > time.Millisecond {
			t.Errorf("%s: expire_at %q; want %v", id, expiry[id], want)
		}
	}

	e.do(http.MethodPost, "/project/ttl_settings/update", e.admin, map[string]any{"project_id": "acme/app", "retention_days": nil})
	if got := read(e.member); got != `{"retention_days":null}` {
		t.Errorf("after clearing reads %s; want null", got)
	}
}
