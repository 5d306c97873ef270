package traceapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
)

type tableRow struct {
	Digest        string          `json:"digest"`
	Val           json.RawMessage `json:"val"`
	OriginalIndex int64           `json:"original_index"`
}

func (e *apiEnv) createTable(project string, rows ...any) (string, []string) {
	e.t.Helper()
	var res struct {
		Digest     string   `json:"digest"`
		RowDigests []string `json:"row_digests"`
	}
	e.ok(http.MethodPost, "/table/create", map[string]any{"table": map[string]any{"project_id": project, "rows": rows}}, &res)
	return res.Digest, res.RowDigests
}

// queryRows answers /table/query with extra request fields.
func (e *apiEnv) queryRows(digest string, extra map[string]any) []tableRow {
	e.t.Helper()
	body := map[string]any{"project_id": "acme/app", "digest": digest}
	for k, v := range extra {
		body[k] = v
	}
	var res struct{ Rows []tableRow }
	e.ok(http.MethodPost, "/table/query", body, &res)
	return res.Rows
}

func vals(rows []tableRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string(r.Val)
	}
	return out
}

func TestTableQueries(t *testing.T) {
	e := newAPIEnv(t)
	digest, rowDigests := e.createTable("acme/app", map[string]any{"n": 3, "s": "c"}, map[string]any{"n": 1, "s": "a"}, map[string]any{"n": 2, "s": "b"})
	if len(digest) != 64 || len(rowDigests) != 3 {
		t.Fatalf("create answered %s %v", digest, rowDigests)
	}
	if again, _ := e.createTable("acme/app", map[string]any{"s": "c", "n": 3}, map[string]any{"n": 1, "s": "a"}, map[string]any{"n": 2, "s": "b"}); again != digest {
		t.Errorf("same rows, other key order: digest %s; want %s", again, digest)
	}
	sortN := func(dir string) []map[string]string { return []map[string]string{{"field": "n", "direction": dir}} }
	tests := []struct {
		name  string
		extra map[string]any
		want  []string
		index []int64
	}{
		{"insertion order", nil, []string{`{"n":3,"s":"c"}`, `{"n":1,"s":"a"}`, `{"n":2,"s":"b"}`}, []int64{0, 1, 2}},
		{"sorted", map[string]any{"sort_by": sortN("asc")}, []string{`{"n":1,"s":"a"}`, `{"n":2,"s":"b"}`, `{"n":3,"s":"c"}`}, []int64{1, 2, 0}},
		{"sorted desc, paged", map[string]any{"sort_by": sortN("desc"), "limit": 1, "offset": 1}, []string{`{"n":2,"s":"b"}`}, []int64{2}},
		{"filtered", map[string]any{"filter": map[string]any{"row_digests": []string{rowDigests[2]}}}, []string{`{"n":2,"s":"b"}`}, []int64{2}},
		{"page", map[string]any{"limit": 2}, []string{`{"n":3,"s":"c"}`, `{"n":1,"s":"a"}`}, []int64{0, 1}},
	}
	for _, tt := range tests {
		rows := e.queryRows(digest, tt.extra)
		var idx []int64
		for _, r := range rows {
			idx = append(idx, r.OriginalIndex)
		}
		if !slices.Equal(vals(rows), tt.want) || !slices.Equal(idx, tt.index) {
			t.Errorf("%s: got %v at %v; want %v at %v", tt.name, vals(rows), idx, tt.want, tt.index)
		}
	}
	if rows := e.queryRows("0000", nil); rows == nil || len(rows) != 0 {
		t.Errorf("unknown table: rows %v; want []", rows)
	}
	assertStream(t, e, digest, rowDigests)
	assertTableStats(t, e, digest)
}

func assertStream(t *testing.T, e *apiEnv, digest string, rowDigests []string) {
	t.Helper()
	status, out := e.send(http.MethodPost, "/table/query_stream", map[string]any{"project_id": "acme/app", "digest": digest})
	if status != http.StatusOK {
		t.Fatalf("query_stream = %d %s", status, out)
	}
	var got []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r tableRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("stream line %q: %v", sc.Text(), err)
		}
		got = append(got, r.Digest)
	}
	if !slices.Equal(got, rowDigests) {
		t.Errorf("stream rows %v; want %v", got, rowDigests)
	}
	if status, out := e.send(http.MethodPost, "/table/query_stream", map[string]any{"project_id": "acme/app", "digest": "none"}); status != 200 || len(out) != 0 {
		t.Errorf("stream of an unknown table = %d %q; want 200 and no lines", status, out)
	}
}

func assertTableStats(t *testing.T, e *apiEnv, digest string) {
	t.Helper()
	var st struct{ Count int64 }
	e.ok(http.MethodPost, "/table/query_stats", map[string]any{"project_id": "acme/app", "digest": digest}, &st)
	if st.Count != 3 {
		t.Errorf("query_stats count %d; want 3", st.Count)
	}
	var batch struct {
		Tables []struct {
			Digest  string `json:"digest"`
			Count   int64  `json:"count"`
			Storage *int64 `json:"storage_size_bytes"`
		}
	}
	e.ok(http.MethodPost, "/table/query_stats_batch", map[string]any{"project_id": "acme/app", "digests": []string{"nope", digest}, "include_storage_size": true}, &batch)
	// Rows are stored as Python prints them: {"n": 3, "s": "c"} is 18 bytes.
	if len(batch.Tables) != 1 || batch.Tables[0].Count != 3 || batch.Tables[0].Storage == nil || *batch.Tables[0].Storage != 3*18 {
		t.Errorf("query_stats_batch = %+v", batch.Tables)
	}
	e.ok(http.MethodPost, "/table/query_stats_batch", map[string]any{"project_id": "acme/app"}, &batch)
	if batch.Tables == nil || len(batch.Tables) != 0 {
		t.Errorf("stats batch of no digests = %v; want []", batch.Tables)
	}
}

func TestTableUpdates(t *testing.T) {
	e := newAPIEnv(t)
	base, rowDigests := e.createTable("acme/app", map[string]any{"i": 0}, map[string]any{"i": 1})
	var upd struct {
		Digest  string   `json:"digest"`
		Updated []string `json:"updated_row_digests"`
	}
	e.ok(http.MethodPost, "/table/update", map[string]any{"project_id": "acme/app", "base_digest": base, "updates": []any{
		map[string]any{"append": map[string]any{"row": map[string]any{"i": 2}}},
		map[string]any{"pop": map[string]any{"index": 0}},
		map[string]any{"insert": map[string]any{"index": 0, "row": map[string]any{"i": -1}}},
	}}, &upd)
	if got := vals(e.queryRows(upd.Digest, nil)); !slices.Equal(got, []string{`{"i":-1}`, `{"i":1}`, `{"i":2}`}) {
		t.Errorf("updated rows %v", got)
	}
	if len(upd.Updated) != 3 || upd.Updated[1] != rowDigests[0] {
		t.Errorf("updated_row_digests %v; want the popped row %s second", upd.Updated, rowDigests[0])
	}
	if got := vals(e.queryRows(base, nil)); len(got) != 2 {
		t.Errorf("base table changed: %v", got)
	}
	var fromDigests struct{ Digest string }
	e.ok(http.MethodPost, "/table/create_from_digests", map[string]any{"project_id": "acme/app", "row_digests": []string{rowDigests[1], rowDigests[0]}}, &fromDigests)
	if got := vals(e.queryRows(fromDigests.Digest, nil)); !slices.Equal(got, []string{`{"i":1}`, `{"i":0}`}) {
		t.Errorf("table from digests: %v", got)
	}
	status, out := e.send(http.MethodPost, "/table/create_from_digests", map[string]any{"project_id": "acme/app", "row_digests": []string{}, "expected_digest": "wrong"})
	if status != http.StatusConflict {
		t.Errorf("expected_digest mismatch = %d %s; want 409", status, out)
	}
}

// TestTSClientDatasetSamples replays Dataset.save(): table/create, then
// table/query with no limit must give every row in insertion order.
func TestTSClientDatasetSamples(t *testing.T) {
	e := newAPIEnv(t)
	var created struct {
		Digest     string   `json:"digest"`
		RowDigests []string `json:"row_digests"`
	}
	e.ok(http.MethodPost, "/table/create", loadSample(t, "10-table-create"), &created)
	query := loadSample(t, "11-table-query")
	query["digest"] = created.Digest
	var res struct{ Rows []tableRow }
	e.ok(http.MethodPost, "/table/query", query, &res)
	if len(res.Rows) != 2 || res.Rows[0].Digest != created.RowDigests[0] || res.Rows[1].OriginalIndex != 1 ||
		!jsonEqual(t, res.Rows[0].Val, map[string]any{"question": "capital of France?", "expected": "Paris"}) {
		t.Errorf("rows %+v", res.Rows)
	}
}

// BenchmarkTableQuery reads a 1,000-row dataset whole, as the TypeScript
// SDK does after every Dataset.save and load.
func BenchmarkTableQuery(b *testing.B) {
	e := newAPIEnv(b)
	rows := make([]any, 1000)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "question": "what is the answer to question " + strconv.Itoa(i) + "?", "expected": "42"}
	}
	digest, _ := e.createTable("acme/app", rows...)
	body := `{"project_id":"acme/app","digest":"` + digest + `"}`
	b.ResetTimer()
	for b.Loop() {
		if status, out := e.send(http.MethodPost, "/table/query", body); status != http.StatusOK {
			b.Fatalf("%d %s", status, out)
		}
	}
}

// BenchmarkObjCreate publishes distinct small objects (one write
// transaction each).
func BenchmarkObjCreate(b *testing.B) {
	e := newAPIEnv(b)
	i := 0
	for b.Loop() {
		i++
		e.publish("acme/app", "cfg-"+strconv.Itoa(i), map[string]any{"temperature": 0.2, "n": i})
	}
}
