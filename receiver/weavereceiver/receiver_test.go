package weavereceiver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/storage"
)

// recorder is a consumer.Calls that keeps what it was given.
type recorder struct {
	ops []storage.CallOp
	err error
}

func (r *recorder) ConsumeCalls(_ context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.ops = append(r.ops, ops...)
	res := make([]storage.CallOpResult, len(ops))
	for i, op := range ops {
		if op.Delete != nil {
			res[i].NumDeleted = len(op.Delete.IDs)
		}
	}
	return res, nil
}

func serve(t *testing.T, sub consumer.Calls, p auth.Principal, path, body string) (int, string) {
	t.Helper()
	mux := http.NewServeMux()
	withCaller := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), p)))
		})
	}
	New(sub, func(json.RawMessage) []string { return nil }, 1<<20, slog.New(slog.DiscardHandler)).Register(mux, withCaller)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return rec.Code, rec.Body.String()
}

var member = auth.Principal{UserID: "u1", Entity: "acme", Role: auth.RoleMember}

const start = `{"project_id":"acme/p","id":"c1","trace_id":"t","op_name":"op","started_at":"2025-01-01T00:00:00Z","wb_user_id":"spoof"}`
const end = `{"project_id":"acme/p","id":"c1","ended_at":"2025-01-01T00:00:01Z","summary":{}}`

func TestWriteEndpoints(t *testing.T) {
	tests := []struct {
		name, path, body string
		status           int
		kinds            []storage.PartKind // 0 for update/delete ops
		answer           string
	}{
		{"start", "/call/start", `{"start":` + start + `}`, 200, []storage.PartKind{storage.PartStart}, `"id":"c1"`},
		{"end", "/call/end", `{"end":` + end + `}`, 200, []storage.PartKind{storage.PartEnd}, `{}`},
		{"batch in order", "/call/upsert_batch", `{"batch":[{"mode":"end","req":{"end":` + end + `}},{"mode":"start","req":{"start":` + start + `}}]}`,
			200, []storage.PartKind{storage.PartEnd, storage.PartStart}, `"res":[{},{"id":"c1","trace_id":"t"}]`},
		{"v2 start", "/v2/acme/p/call/start", `{"start":` + start + `}`, 200, []storage.PartKind{storage.PartStart}, `"trace_id":"t"`},
		{"complete", "/v2/acme/p/calls/complete", `{"batch":[` + strings.TrimSuffix(start, "}") + `,"ended_at":"2025-01-01T00:00:01Z","summary":null}]}`,
			200, []storage.PartKind{storage.PartComplete}, `{}`},
		{"end renamed while running", "/call/upsert_batch", `{"batch":[{"mode":"start","req":{"start":` + start + `}},{"mode":"end","req":{"end":` +
			strings.TrimSuffix(end, "}") + `,"display_name":"renamed"}}}]}`, 200, []storage.PartKind{storage.PartStart, storage.PartEnd, 0}, `"res":[{"id":"c1","trace_id":"t"},{}]`},
		{"end display name too long", "/call/end", `{"end":` + strings.TrimSuffix(end, "}") + `,"display_name":"` + strings.Repeat("x", 1025) + `"}}`,
			400, nil, "end.display_name"},
		{"update", "/call/update", `{"project_id":"acme/p","call_id":"c1","display_name":"x"}`, 200, []storage.PartKind{0}, `{}`},
		{"delete", "/calls/delete", `{"project_id":"acme/p","call_ids":["a","b"]}`, 200, []storage.PartKind{0}, `"num_deleted":2`},
		{"path project differs", "/v2/acme/other/call/start", `{"start":` + start + `}`, 400, nil, "URL path"},
		{"bad mode", "/call/upsert_batch", `{"batch":[{"mode":"both","req":{}}]}`, 422, nil, "batch[0].mode"},
		{"start missing", "/call/upsert_batch", `{"batch":[{"mode":"start","req":{}}]}`, 422, nil, "batch[0].req.start"},
		{"other entity", "/call/start", `{"start":` + strings.Replace(start, "acme/p", "evil/p", 1) + `}`, 403, nil, "evil"},
		{"start id of 64 KiB", "/call/start", `{"start":` + strings.Replace(start, `"c1"`, `"`+strings.Repeat("a", 64<<10)+`"`, 1) + `}`, 400, nil, "start.id"},
		{"start id with a space", "/call/start", `{"start":` + strings.Replace(start, `"c1"`, `"c 1"`, 1) + `}`, 400, nil, "start.id"},
		{"start inputs 5000 deep", "/call/start", `{"start":` + strings.TrimSuffix(start, "}") + `,"inputs":{"a":` +
			strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}}`, 400, nil, "start.inputs"},
		{"end output 5000 deep", "/call/upsert_batch", `{"batch":[{"mode":"end","req":{"end":` + strings.TrimSuffix(end, "}") + `,"output":` +
			strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}}]}`, 400, nil, "batch[0].req.end.output"},
		{"end id too long", "/call/end", `{"end":` + strings.Replace(end, `"c1"`, `"`+strings.Repeat("a", 129)+`"`, 1) + `}`, 400, nil, "end.id"},
		{"project with a NUL", "/call/start", `{"start":` + strings.Replace(start, "acme/p", `acme/p\u0000`, 1) + `}`, 400, nil, "project_id"},
		{"project with a space", "/call/start", `{"start":` + strings.Replace(start, "acme/p", "acme/my p", 1) + `}`, 400, nil, "project_id"},
		{"project dot-dot", "/call/start", `{"start":` + strings.Replace(start, "acme/p", "acme/..", 1) + `}`, 400, nil, "project_id"},
		{"update call id too long", "/call/update", `{"project_id":"acme/p","call_id":"` + strings.Repeat("a", 129) + `","display_name":"x"}`, 400, nil, "call_id"},
		{"delete call id with a newline", "/calls/delete", `{"project_id":"acme/p","call_ids":["a","b\n"]}`, 400, nil, "call_ids[1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			status, body := serve(t, rec, member, tc.path, tc.body)
			if status != tc.status || !strings.Contains(body, tc.answer) {
				t.Fatalf("got %d %s; want %d containing %s", status, body, tc.status, tc.answer)
			}
			if len(rec.ops) != len(tc.kinds) {
				t.Fatalf("submitted %d ops, want %d", len(rec.ops), len(tc.kinds))
			}
			for i, op := range rec.ops {
				var k storage.PartKind
				if op.Part != nil {
					k = op.Part.Kind
					if op.Part.Kind.HasStart() && op.Part.Call.WBUserID != "u1" {
						t.Fatalf("wb_user_id %q not taken from the caller", op.Part.Call.WBUserID)
					}
				}
				if k != tc.kinds[i] {
					t.Fatalf("op %d kind %v, want %v", i, k, tc.kinds[i])
				}
				if u := op.Update; u != nil && (u.ID != "c1" || u.DisplayName == "" || u.WBUserID != "u1") {
					t.Fatalf("update op %+v", u)
				}
			}
		})
	}
}

func TestOverloadAnswers429(t *testing.T) {
	status, body := serve(t, &recorder{err: consumer.ErrOverloaded}, member, "/call/start", `{"start":`+start+`}`)
	if status != http.StatusTooManyRequests || !strings.Contains(body, "full") {
		t.Fatalf("overload = %d %s", status, body)
	}
}
