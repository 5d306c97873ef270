package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
)

// TestUsernamesAndExpiry: include_usernames fills wb_username with the
// writer's user name, and expire_at is the start plus the project's
// retention, null where calls are kept.
func TestUsernamesAndExpiry(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Retention.Projects = map[string]time.Duration{"acme/ttl": 48 * time.Hour} })
	ada := e.keyFor("acme", auth.RoleMember, "ada")
	// A start within the retention: the expiry, which runs from the
	// server's start, would remove an older call.
	start := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	started, expires := start.Format(time.RFC3339), start.Add(48*time.Hour).Format(time.RFC3339)
	for _, project := range []string{"acme/ttl", "acme/keep"} {
		status, _, body := e.do(http.MethodPost, "/call/start", ada, map[string]any{"start": map[string]any{
			"project_id": project, "id": "c1", "trace_id": "t1", "op_name": "op", "started_at": started,
			"attributes": map[string]any{}, "inputs": map[string]any{}}})
		if status != http.StatusOK {
			t.Fatalf("start in %s: %d %s", project, status, body)
		}
	}
	tests := []struct {
		name, project string
		req           map[string]any
		username      any // nil: the key is absent
		expireAt      any
	}{
		{"usernames asked", "acme/ttl", map[string]any{"include_usernames": true}, "ada", expires},
		{"usernames with columns", "acme/ttl", map[string]any{"include_usernames": true, "columns": []string{"id"}}, "ada", expires},
		{"not asked", "acme/ttl", map[string]any{}, nil, expires},
		{"no retention", "acme/keep", map[string]any{"include_usernames": true}, "ada", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req["project_id"] = tt.project
			calls := e.rawCalls(tt.req)
			if len(calls) != 1 {
				t.Fatalf("%d calls", len(calls))
			}
			c := calls[0]
			if u, ok := c["wb_username"]; u != tt.username || (tt.username == nil && ok) {
				t.Errorf("wb_username = %v (present %v), want %v", u, ok, tt.username)
			}
			if x, ok := c["expire_at"]; !ok || x != tt.expireAt {
				t.Errorf("expire_at = %v (present %v), want %v", x, ok, tt.expireAt)
			}
		})
	}
}

// keyFor adds a key for a named user.
func (e *env) keyFor(entity string, role auth.Role, user string) string {
	e.t.Helper()
	k, secret, err := auth.NewKey(entity, role, user, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.keys.PutKey(context.Background(), k); err != nil {
		e.t.Fatal(err)
	}
	return secret
}

// rawCalls streams calls as generic JSON objects, as the member.
func (e *env) rawCalls(body map[string]any) []map[string]any {
	e.t.Helper()
	status, _, out := e.do(http.MethodPost, "/calls/stream_query", e.member, body)
	if status != http.StatusOK {
		e.t.Fatalf("stream_query = %d: %s", status, out)
	}
	var calls []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c map[string]any
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			e.t.Fatalf("line %s: %v", sc.Bytes(), err)
		}
		calls = append(calls, c)
	}
	return calls
}
