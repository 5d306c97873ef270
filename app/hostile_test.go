package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftdev/weft/app"
	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/config"
)

// The hostile-input property: whatever JSON strings a valid key writes
// through any write endpoint, each write answers 2xx or 4xx, and every
// kind of query on that project answers 200 afterwards. It is what would
// have caught lone surrogates poisoning a project.

// hostileFragments are the contents of JSON strings (between the quotes,
// as sent): escapes that encode no text, control characters, invalid
// UTF-8, characters that mean something in paths, SQL or LIKE, long text.
var hostileFragments = []string{
	`\ud800`, `\udc00`, `\udbff\udbff`, `x\ud800y`, `\ud83d\ude00`, `\ud800\ude00\udc00`, `\\ud800`, `\\\ud800`,
	`\u0000`, `\u001f\b\f\n\r\t`, "\x01", "\x7f", "\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80",
	`\"`, `\\`, `\/`, `%_*?`, `'; DROP TABLE calls; --`, `$eq`, `a.b.c`, `[0]`, `~1/`, `weave:///acme/x/object/o:d`,
	`\u202e\u200b`, "é€𝄞", ``, " ", `9e999`, `null`, strings.Repeat("k", 10_000), strings.Repeat(`\ud800`, 500),
}

// hostile is an in-process weft and a member key of entity acme.
type hostile struct {
	h        http.Handler
	key      string
	projects atomic.Int64
}

func newHostile(t testing.TB) *hostile {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	srv, err := app.New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	k, secret, err := auth.NewKey("acme", auth.RoleMember, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Keys().PutKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return &hostile{h: srv.Handler(), key: secret}
}

func (hs *hostile) post(path, body string) (int, string) {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.SetBasicAuth("api", hs.key)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	hs.h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// check writes frag through every write endpoint of a fresh project and
// then runs every query kind on it. It returns the writes refused.
func (hs *hostile) check(t testing.TB, frag string) []string {
	t.Helper()
	project := fmt.Sprintf("acme/p%d", hs.projects.Add(1))
	refused, table := hs.write(t, project, frag)
	for _, q := range queryBodies(project, table) {
		// A read of one record finds nothing when its writes were refused.
		missing := strings.HasSuffix(q.path, "/read")
		if code, out := hs.post(q.path, q.body); code != http.StatusOK && !(missing && code == http.StatusNotFound) {
			t.Fatalf("after writing %q, query %s %s answered %d: %s", frag, q.path, q.body, code, out)
		}
	}
	for _, q := range queryBodiesWith(project, frag) {
		if code, out := hs.post(q.path, q.body); code >= 500 {
			t.Fatalf("query %s with %q answered %d: %s", q.path, frag, code, out)
		}
	}
	return refused
}

// write sends every write body, then a table update on the table written;
// it returns the refused writes and the table's digest ("" if refused).
func (hs *hostile) write(t testing.TB, project, frag string) ([]string, string) {
	t.Helper()
	var refused []string
	var table struct{ Digest string }
	writes := writeBodies(project, frag)
	for i := 0; i < len(writes); i++ {
		w := writes[i]
		code, out := hs.post(w.path, w.body)
		if code >= 500 || code < 200 {
			t.Fatalf("write %s with %q answered %d: %s", w.path, frag, code, out)
		}
		if code >= 300 {
			refused = append(refused, w.path+": "+out)
		} else if w.path == "/table/create" && json.Unmarshal([]byte(out), &table) == nil {
			writes = append(writes, fill(project, frag, request{"/table/update", `{"project_id":$P,"base_digest":"` +
				table.Digest + `","updates":[{"append":{"row":{$S:$S,"q":$S}}},{"insert":{"index":0,"row":{"q":[$S]}}},{"pop":{"index":1}}]}`})...)
		}
	}
	return refused, table.Digest
}

// TestHostileStringsNeverBreakAProject writes every fragment, and random
// joins of them, through every write endpoint. Deterministic and bounded.
func TestHostileStringsNeverBreakAProject(t *testing.T) {
	hs := newHostile(t)
	// The bodies are right: plain text is written everywhere.
	if refused := hs.check(t, "plain"); len(refused) != 0 {
		t.Fatalf("plain text refused: %q", refused)
	}
	for _, frag := range hostileFragments {
		hs.check(t, frag)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for range 12 {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(hostileFragments[rng.IntN(len(hostileFragments))])
		}
		hs.check(t, b.String())
	}
}

// FuzzHostileStrings is the same property for go test -fuzz.
func FuzzHostileStrings(f *testing.F) {
	for _, frag := range hostileFragments[:16] {
		f.Add([]byte(frag))
	}
	hs := newHostile(f)
	f.Fuzz(func(t *testing.T, frag []byte) {
		if len(frag) > 64<<10 {
			t.Skip("longer fragments add nothing but time")
		}
		hs.check(t, string(frag))
	})
}
