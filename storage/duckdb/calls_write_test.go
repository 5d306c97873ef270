package duckdb

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
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
		refs               []any
	)
	err := s.db.QueryRowContext(ctx, `SELECT op_name, output, exception, started_at, ended_at, has_start, has_end, output_refs
		FROM calls WHERE project_id = 'e/p' AND id = 'c1'`).Scan(&op, &out, &exception, &started, &ended, &hasStart, &hasEnd, &refs)
	if err != nil {
		t.Fatal(err)
	}
	if op != "op" || out != "42" || exception != "boom" || !started.Equal(t0) || !ended.Equal(t1) || !hasStart || !hasEnd || len(refs) != 1 {
		t.Fatalf("merged row wrong: op=%q out=%q exc=%q started=%v ended=%v start=%v end=%v refs=%v", op, out, exception, started, ended, hasStart, hasEnd, refs)
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

func TestQueryCallsPagesLongStreams(t *testing.T) {
	s := openTestStore(t)
	s.pageSize = 3
	ctx := context.Background()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var ops []storage.CallOp
	for i := range 10 {
		ops = append(ops, storage.CallOp{Part: &storage.CallPart{Kind: storage.PartStart, Call: storage.Call{
			ProjectID: "e/p", ID: fmt.Sprintf("c%02d", i), TraceID: "t", OpName: "op", StartedAt: base.Add(time.Duration(i) * time.Second)}}})
	}
	if _, err := s.WriteCallOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
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
}

func TestOtelDumpIsStoredCompressedAndReadBack(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	dump := json.RawMessage(`{"name":"chat","attributes":{"gen_ai.prompt":"` + strings.Repeat("lorem ipsum ", 200) + `"}}`)
	now := time.Now().UTC()
	// Text that compresses poorly is kept as it came: base64 would make
	// it a third larger.
	var noise strings.Builder
	for i := range 400 {
		fmt.Fprintf(&noise, "%x", uint32(i)*2654435761)
	}
	poor := json.RawMessage(`{"name":"chat","attributes":{"blob":"` + noise.String() + `"}}`)
	for id, d := range map[string]json.RawMessage{"s1": dump, "poor": poor} {
		part := storage.CallPart{Kind: storage.PartComplete, Call: storage.Call{ProjectID: "e/p", ID: id, TraceID: "t", OpName: "chat",
			StartedAt: now, EndedAt: &now, OtelDump: d, Attributes: json.RawMessage(`{}`), Inputs: json.RawMessage(`{}`)}}
		if _, err := s.WriteCallOps(ctx, []storage.CallOp{{Part: &part}}); err != nil {
			t.Fatal(err)
		}
	}
	// Dumps as stores written by earlier versions hold them read too:
	// plain text, and zstd-compressed.
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
	var stored, storedPoor string
	if err := s.db.QueryRowContext(ctx, `SELECT otel_dump FROM calls WHERE id = 's1'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, s2Prefix) || len(stored) >= len(dump)/2 {
		t.Fatalf("stored dump is %d bytes for a %d-byte span: %.40s", len(stored), len(dump), stored)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT otel_dump FROM calls WHERE id = 'poor'`).Scan(&storedPoor); err != nil {
		t.Fatal(err)
	}
	if storedPoor != string(poor) {
		t.Fatalf("a dump compression cannot shrink is stored as %d bytes for %d: %.40s", len(storedPoor), len(poor), storedPoor)
	}
	got := map[string]string{}
	for c, err := range s.QueryCalls(ctx, storage.CallsQuery{ProjectID: "e/p"}) {
		if err != nil {
			t.Fatal(err)
		}
		got[c.ID] = string(c.OtelDump)
	}
	if got["s1"] != string(dump) || got["poor"] != string(poor) || got["plain"] != `{"plain":true}` || got["zstd"] != `{"zstd":true}` {
		t.Fatalf("dumps read back: %.60q / %q / %q", got["s1"], got["plain"], got["zstd"])
	}
}
