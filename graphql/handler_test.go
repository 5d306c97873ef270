package graphql_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/graphql"
)

// server serves the GraphQL endpoint over a real key store with three
// keys: a member and a viewer of acme, and an instance-wide admin.
func server(t *testing.T) (url string, keys map[string]string) {
	t.Helper()
	store := auth.NewFileStore(t.TempDir())
	keys = map[string]string{}
	for _, k := range []struct {
		name, entity, user string
		role               auth.Role
	}{{"member", "acme", "ada", auth.RoleMember}, {"viewer", "acme", "grace", auth.RoleViewer},
		{"admin", auth.AllEntities, "root", auth.RoleAdmin}} {
		key, secret, err := auth.NewKey(k.entity, k.role, k.user, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := store.PutKey(context.Background(), key); err != nil {
			t.Fatal(err)
		}
		keys[k.name] = secret
	}
	h := graphql.NewHandler(graphql.WandbSchema(), auth.StoreVerifier{Store: store}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, keys
}

// post sends body with Basic api:key, as the SDKs do, and decodes the
// answer as a generic JSON object.
func post(t *testing.T, url, key string, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.SetBasicAuth("api", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("answer is not a JSON object: %v", err)
	}
	return resp.StatusCode, out
}

// TestSDKDocuments sends the documents the Weave SDKs send at init, as
// their GraphQL clients print them, and compares the whole answer.
func TestSDKDocuments(t *testing.T) {
	url, keys := server(t)
	raw, err := os.ReadFile(filepath.Join("testdata", "sdk-documents.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name, SDK, Key, Query string
		Variables             map[string]any
		Want                  map[string]any
		WantErrors            []string
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"query": tc.Query, "variables": tc.Variables})
			status, got := post(t, url, keys[tc.Key], body)
			if status != http.StatusOK {
				t.Fatalf("status %d: %v", status, got)
			}
			checkErrors(t, got, tc.WantErrors)
			delete(got, "errors")
			if !reflect.DeepEqual(got, tc.Want) {
				t.Errorf("answer %v\nwant   %v", got, tc.Want)
			}
		})
	}
}

// checkErrors wants exactly one error per substring, in order.
func checkErrors(t *testing.T, got map[string]any, want []string) {
	t.Helper()
	errs, _ := got["errors"].([]any)
	if len(errs) != len(want) {
		t.Fatalf("errors %v; want %d containing %q", got["errors"], len(want), want)
	}
	for i, w := range want {
		msg, _ := errs[i].(map[string]any)["message"].(string)
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not contain %q", msg, w)
		}
	}
}

// TestTypeScriptInitRequest replays the TypeScript SDK's request byte for
// byte (captured from weave 0.11.1) and reads the answer as it does.
func TestTypeScriptInitRequest(t *testing.T) {
	url, keys := server(t)
	raw, err := os.ReadFile(filepath.Join("testdata", "01-graphql-viewer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sample struct {
		Request struct {
			Body json.RawMessage `json:"body"`
		} `json:"request"`
	}
	if err := json.Unmarshal(raw, &sample); err != nil {
		t.Fatal(err)
	}
	for key, entity := range map[string]string{"member": "acme", "viewer": "acme", "admin": "root"} {
		status, got := post(t, url, keys[key], sample.Request.Body)
		if _, hasErrors := got["errors"]; status != http.StatusOK || hasErrors {
			t.Fatalf("%s: status %d: %v", key, status, got)
		}
		name := got["data"].(map[string]any)["viewer"].(map[string]any)["defaultEntity"].(map[string]any)["name"]
		if name != entity {
			t.Errorf("%s: defaultEntity.name %v; want %s", key, name, entity)
		}
	}
}

// TestRequestsRefused covers credentials and bodies that are no GraphQL
// request: each gets its status and an errors body that says the fix.
func TestRequestsRefused(t *testing.T) {
	url, keys := server(t)
	viewer := []byte(`{"query":"{ viewer { username } }"}`)
	tests := []struct {
		name, key string
		body      []byte
		status    int
		want      string
	}{
		{"no key", "", viewer, http.StatusUnauthorized, "WANDB_API_KEY"},
		{"unknown key", "weft-nope", viewer, http.StatusUnauthorized, "weft keys create"},
		{"not JSON", "member", []byte(`query { viewer { username } }`), http.StatusBadRequest, `"query"`},
		{"no query", "member", []byte(`{"variables":{}}`), http.StatusBadRequest, `"query" is required`},
		{"too large", "member", []byte(`{"query":"` + strings.Repeat(" ", graphql.MaxRequestBytes) + `{viewer{name}}"}`), http.StatusRequestEntityTooLarge, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, ok := keys[tt.key]
			if !ok {
				key = tt.key // a literal key, not one of the store's
			}
			status, got := post(t, url, key, tt.body)
			if status != tt.status {
				t.Fatalf("status %d; want %d (%v)", status, tt.status, got)
			}
			if _, ok := got["data"]; ok {
				t.Errorf("a refused request has data: %v", got)
			}
			checkErrors(t, got, []string{tt.want})
		})
	}
}
