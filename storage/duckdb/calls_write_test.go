package duckdb

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/weftdev/weft/storage"
)

func openTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestWriteCallOpsMergesSidesAcrossWrites(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC)
	t1 := t0.Add(1500 * time.Millisecond)
	exc := "boom"
	end := storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ProjectID: "e/p", ID: "c1", EndedAt: &t1,
		Exception: &exc, Summary: json.RawMessage(`{"usage":{}}`), Output: json.RawMessage(`42`), OutputRefs: []string{"weave:///e/p/object/o:d"}}}
	start := storage.CallPart{Kind: storage.PartStart, Call: storage.Call{ProjectID: "e/p", ID: "c1", TraceID: "t1",
		OpName: "op", StartedAt: t0, Inputs: json.RawMessage(`{"a":1}`), Attributes: json.RawMessage(`{}`)}}
	if _, err := s.WriteCallOps(ctx, []storage.CallOp{{Part: &end}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteCallOps(ctx, []storage.CallOp{{Part: &start}}); err != nil {
		t.Fatal(err)
	}
	var (
		op, out, exception string
		started, ended     time.Time
		hasStart, hasEnd   bool
		refs               string
	)
	err := s.db.QueryRowContext(ctx, `SELECT op_name, output, exception, started_at, ended_at, has_start, has_end, output_refs
		FROM calls WHERE project_id = 'e/p' AND id = 'c1'`).Scan(&op, &out, &exception, &started, &ended, &hasStart, &hasEnd, &refs)
	if err != nil {
		t.Fatal(err)
	}
	if op != "op" || out != "42" || exception != "boom" || !started.Equal(t0) || !ended.Equal(t1) || !hasStart || !hasEnd || refs != `["weave:///e/p/object/o:d"]` {
		t.Fatalf("merged row wrong: op=%q out=%q exc=%q started=%v ended=%v start=%v end=%v refs=%v", op, out, exception, started, ended, hasStart, hasEnd, refs)
	}
}

// writeCallStarts writes the starts of n calls, call(0) to call(n-1), in
// one transaction.
func writeCallStarts(t *testing.T, s *Store, n int, call func(i int) storage.Call) {
	t.Helper()
	ops := make([]storage.CallOp, n)
	for i := range ops {
		ops[i] = storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: call(i)}}
	}
	if _, err := s.WriteCallOps(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
}

// TestMergesUpdateRowsInPlace: merging a call's end, refs and all, into
// its stored row keeps the row where it is. DuckDB updates a list column
// by deleting the row and inserting it again; refs are kept as text so
// that merges do not.
func TestMergesUpdateRowsInPlace(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	writeCallStarts(t, s, 10, func(i int) storage.Call {
		return storage.Call{ProjectID: "e/p", ID: fmt.Sprintf("c%d", i), OpName: "op", StartedAt: t0, InputRefs: []string{"weave:///e/p/object/in:d"}}
	})
	rowids := func() map[string]int64 {
		rows, err := s.db.QueryContext(ctx, "SELECT id, rowid FROM calls")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int64{}
		for rows.Next() {
			var id string
			var row int64
			if err := rows.Scan(&id, &row); err != nil {
				t.Fatal(err)
			}
			out[id] = row
		}
		return out
	}
	before := rowids()
	t1 := t0.Add(time.Second)
	end := storage.CallPart{Kind: storage.PartEnd, Call: storage.Call{ProjectID: "e/p", ID: "c3", EndedAt: &t1,
		Output: json.RawMessage(`1`), OutputRefs: []string{"weave:///e/p/object/out:d"}}}
	if _, err := s.WriteCallOps(ctx, []storage.CallOp{{Part: &end}}); err != nil {
		t.Fatal(err)
	}
	if after := rowids(); !maps.Equal(before, after) {
		t.Fatalf("rows moved by a merge: %v, then %v", before, after)
	}
	got := readAll(t, s, storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{OutputRefs: []string{"weave:///e/p/object/out:d"}}})
	if len(got) != 1 || got[0].ID != "c3" {
		t.Fatalf("read by output ref: %+v", got)
	}
	if got := readAll(t, s, storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{InputRefs: []string{"weave:///e/p/object/in:*"}}}); len(got) != 10 {
		t.Fatalf("read by input ref prefix: %d calls, want 10", len(got))
	}
}

// TestRefsListsConvertedToText opens a calls table made when refs were
// lists and finds its refs as they were.
func TestRefsListsConvertedToText(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"ALTER TABLE calls ALTER COLUMN input_refs SET DATA TYPE VARCHAR[] USING from_json(input_refs, '[\"VARCHAR\"]')",
		"ALTER TABLE calls ALTER COLUMN output_refs SET DATA TYPE VARCHAR[] USING from_json(output_refs, '[\"VARCHAR\"]')",
		"INSERT INTO calls (project_id, id, has_start, has_end, op_name, started_at, input_refs, output_refs) VALUES " +
			"('e/p', 'old', true, true, 'op', TIMESTAMP '2025-01-02 03:04:05', ['weave:///e/p/object/a:1', 'weave:///e/p/object/b:2'], []), " +
			"('e/p', 'none', true, false, 'op', TIMESTAMP '2025-01-02 03:04:06', NULL, NULL)",
	} {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(stmt, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(ctx, dir, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := readAll(t, s, storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{InputRefs: []string{"weave:///e/p/object/b:2"}}})
	if len(got) != 1 || got[0].ID != "old" {
		t.Fatalf("read by a converted ref: %+v", got)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT id, input_refs, output_refs FROM calls ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var stored []string
	for rows.Next() {
		var id string
		var in, out sql.NullString
		if err := rows.Scan(&id, &in, &out); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, fmt.Sprintf("%s %v %v", id, in, out))
	}
	if want := []string{"none { false} { false}", `old {["weave:///e/p/object/a:1","weave:///e/p/object/b:2"] true} { false}`}; !slices.Equal(stored, want) {
		t.Fatalf("stored refs %q, want %q", stored, want)
	}
	if got := readAll(t, s, storage.CallsQuery{ProjectID: "e/p"}); len(got) != 2 {
		t.Fatalf("%d calls after the conversion, want 2", len(got))
	}
}

func TestDeleteCallsCountsDescendants(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	mk := func(id, parent string) storage.CallOp {
		return storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
			ProjectID: "e/p", ID: id, ParentID: parent, TraceID: "t", OpName: "op", StartedAt: now}}}
	}
	ops := []storage.CallOp{mk("root", ""), mk("child", "root"), mk("grandchild", "child"), mk("other", "")}
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	res, err := s.WriteCallOps(ctx, []storage.CallOp{{Delete: &storage.CallDelete{ProjectID: "e/p", IDs: []string{"root", "missing"}, At: now}}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].NumDeleted != 3 {
		t.Fatalf("num_deleted = %d, want 3 (root, child, grandchild; not missing)", res[0].NumDeleted)
	}
	var live int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM calls WHERE deleted_at IS NULL`).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if live != 1 {
		t.Fatalf("live calls = %d, want 1", live)
	}
}

// writeStarts stores the starts of n calls c00, c01, ... of one trace in
// project e/p, a second apart.
func writeStarts(t *testing.T, s *Store, n int) {
	t.Helper()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	writeCallStarts(t, s, n, func(i int) storage.Call {
		return storage.Call{ProjectID: "e/p", ID: fmt.Sprintf("c%02d", i), TraceID: "t", OpName: "op", StartedAt: base.Add(time.Duration(i) * time.Second)}
	})
}

func TestQueryCallsPagesLongStreams(t *testing.T) {
	s := openTestStore(t)
	s.pageSize = 3
	ctx := context.Background()
	writeStarts(t, s, 10)
	for _, tc := range []struct {
		limit, offset int64
		want          string
	}{
		{0, 0, "c00 c01 c02 c03 c04 c05 c06 c07 c08 c09"},
		{7, 2, "c02 c03 c04 c05 c06 c07 c08"},
		{0, 8, "c08 c09"},
		{3, 0, "c00 c01 c02"},
	} {
		var got []string
		for c, err := range s.QueryCalls(ctx, storage.CallsQuery{ProjectID: "e/p", Limit: tc.limit, Offset: tc.offset}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, c.ID)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("limit %d offset %d: got %v, want %s", tc.limit, tc.offset, got, tc.want)
		}
	}
	// A read by ids runs as one statement when it fits a page, and in
	// pages when it does not.
	for _, pageSize := range []int64{3, 9, 10, 11, 100} {
		s.pageSize = pageSize
		var got []string
		for c, err := range s.QueryCalls(ctx, storage.CallsQuery{ProjectID: "e/p", Filter: storage.CallsFilter{TraceIDs: []string{"t"}}}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, c.ID)
		}
		if want := "c00 c01 c02 c03 c04 c05 c06 c07 c08 c09"; strings.Join(got, " ") != want {
			t.Errorf("trace read in pages of %d: got %v, want %s", pageSize, got, want)
		}
	}
}

func TestOtelDumpIsStoredOnceAndReadBack(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	msgs := `[{"role":"user","content":"` + strings.Repeat("lorem ipsum ", 20) + `"}]`
	answer := `[{"role":"assistant","content":"` + strings.Repeat("dolor sit amet ", 20) + `"}]`
	dump := json.RawMessage(`{"name":"chat","attributes":{"gen_ai":{"input":{"messages":` + msgs + `},"output":{"messages":` + answer + `}}}}`)
	notUTF8 := json.RawMessage("{\"name\":\"\xff\"}")
	part := func(kind storage.PartKind, id string, d json.RawMessage, output string) *storage.CallPart {
		return &storage.CallPart{Kind: kind, Call: storage.Call{ProjectID: "e/p", ID: id, TraceID: "t", OpName: "chat",
			StartedAt: now, EndedAt: &now, OtelDump: d, Attributes: json.RawMessage(`{}`),
			Inputs: json.RawMessage(`{"gen_ai.input.messages":` + msgs + `}`), Output: json.RawMessage(output)}}
	}
	write := func(p *storage.CallPart) {
		t.Helper()
		if _, err := s.WriteCallOps(ctx, []storage.CallOp{{Part: p}}); err != nil {
			t.Fatal(err)
		}
	}
	write(part(storage.PartComplete, "s1", dump, `{"gen_ai.output.messages":`+answer+`}`))
	write(part(storage.PartComplete, "bytes", notUTF8, `null`))
	// Earlier versions stored dumps plain, and compressed with zstd.
	old, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	zstdDump := zstdPrefix + base64.RawStdEncoding.EncodeToString(old.EncodeAll([]byte(`{"zstd":true}`), nil))
	for id, stored := range map[string]string{"plain": `{"plain":true}`, "zstd": zstdDump} {
		if _, err := s.db.ExecContext(ctx, `INSERT INTO calls (project_id, id, has_start, has_end, trace_id, op_name, started_at, otel_dump)
			VALUES ('e/p', ?, true, false, 't', 'chat', ?, ?)`, id, now, stored); err != nil {
			t.Fatal(err)
		}
	}
	var stored string
	if err := s.db.QueryRowContext(ctx, `SELECT otel_dump FROM calls WHERE id = 's1'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, refPrefix) || len(stored) > len(dump)-len(msgs)-len(answer)+40 {
		t.Fatalf("stored dump is %d bytes for a %d-byte span: %q", len(stored), len(dump), stored)
	}
	want := map[string]string{"s1": string(dump), "bytes": string(notUTF8), "plain": `{"plain":true}`, "zstd": `{"zstd":true}`}
	readDumps(t, s, want)
	// An end that replaces the output the dump referenced leaves the dump
	// as it was, however often it comes.
	for _, later := range []string{`{"text":"a later answer"}`, `{"text":"and another"}`} {
		write(part(storage.PartEnd, "s1", nil, later))
		readDumps(t, s, want)
	}
	// A new start replaces the dump.
	write(part(storage.PartStart, "s1", json.RawMessage(`{"name":"again","input":`+msgs+`}`), ``))
	want["s1"] = `{"name":"again","input":` + msgs + `}`
	readDumps(t, s, want)
}

func readDumps(t *testing.T, s *Store, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for c, err := range s.QueryCalls(context.Background(), storage.CallsQuery{ProjectID: "e/p"}) {
		if err != nil {
			t.Fatal(err)
		}
		got[c.ID] = string(c.OtelDump)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("dump of %s read back as %.80q, want %.80q", id, got[id], w)
		}
	}
}

func TestLargeTextColumnsAreCompressed(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	ops := make([]storage.CallOp, 3000)
	for i := range ops {
		text := fmt.Sprintf(`{"text":"%s %d"}`, strings.Repeat("many words repeat in prompts ", 10), i)
		ops[i].Part = &storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{ProjectID: "e/p", ID: fmt.Sprint(i),
			TraceID: "t", OpName: "chat", StartedAt: now, EndedAt: &now, Inputs: json.RawMessage(text),
			Output: json.RawMessage(text), OtelDump: json.RawMessage(`{"span":` + text + `}`)}}
	}
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "FORCE CHECKPOINT "+callsCatalog); err != nil {
		t.Fatal(err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT column_name, string_agg(DISTINCT compression, ',' ORDER BY compression)
		FROM pragma_storage_info('`+callsCatalog+`.main.calls') WHERE column_name IN ('inputs', 'output', 'otel_dump') AND segment_type = 'VARCHAR' GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var col, compression string
		if err := rows.Scan(&col, &compression); err != nil {
			t.Fatal(err)
		}
		if n++; compression != "ZSTD" {
			t.Errorf("%s is stored with %s, want ZSTD", col, compression)
		}
	}
	if n != 3 {
		t.Fatalf("storage info for %d of the 3 columns", n)
	}
}
