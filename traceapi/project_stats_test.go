package traceapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/traceapi"
)

// TestProjectStatsAndInfo: /project/stats answers every size of the
// reference's shape, 0 for a size left out; /service/projects_info maps
// each readable project to itself; both refuse another entity's project.
func TestProjectStatsAndInfo(t *testing.T) {
	e := newUsageEnv(t)
	traceapi.NewProjectsAPI(e.store, 1<<20, slog.New(slog.DiscardHandler)).Register(e.mux, e.wrapAs)
	e.send(http.MethodPost, "/obj/create", map[string]any{"obj": map[string]any{"project_id": "acme/p", "object_id": "o", "val": map[string]any{"a": 1}}})

	status, out := e.send(http.MethodPost, "/project/stats", map[string]any{"project_id": "acme/p"})
	var st map[string]int64
	if status != http.StatusOK || json.Unmarshal(out, &st) != nil {
		t.Fatalf("/project/stats = %d %s", status, out)
	}
	for _, k := range []string{"trace_storage_size_bytes", "objects_storage_size_bytes", "tables_storage_size_bytes", "files_storage_size_bytes"} {
		if _, ok := st[k]; !ok {
			t.Errorf("answer %s lacks %s", out, k)
		}
	}
	if st["trace_storage_size_bytes"] <= 0 || st["objects_storage_size_bytes"] <= 0 {
		t.Errorf("answer %s; want the calls and the object counted", out)
	}
	_, out = e.send(http.MethodPost, "/project/stats", map[string]any{"project_id": "acme/p", "include_trace_storage_size": false})
	if json.Unmarshal(out, &st) != nil || st["trace_storage_size_bytes"] != 0 || st["objects_storage_size_bytes"] <= 0 {
		t.Errorf("with traces left out: %s", out)
	}

	status, out = e.send(http.MethodPost, "/service/projects_info", map[string]any{"project_ids": []string{"acme/p", "acme/q"}})
	want := `[{"external_project_id":"acme/p","internal_project_id":"acme/p"},{"external_project_id":"acme/q","internal_project_id":"acme/q"}]`
	if status != http.StatusOK || strings.TrimSpace(string(out)) != want {
		t.Errorf("/service/projects_info = %d %s; want %s", status, out, want)
	}
	for path, body := range map[string]any{
		"/project/stats":         map[string]any{"project_id": "other/p"},
		"/service/projects_info": map[string]any{"project_ids": []string{"acme/p", "other/p"}},
	} {
		if status, out := e.send(http.MethodPost, path, body); status != http.StatusForbidden {
			t.Errorf("%s for another entity = %d %s; want 403", path, status, out)
		}
	}
}
