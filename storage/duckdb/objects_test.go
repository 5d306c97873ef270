package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/weftdev/weft/digest"
	"github.com/weftdev/weft/storage"
)

func openContentStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var (
	_ storage.ObjectStore = (*Store)(nil)
	_ storage.TableStore  = (*Store)(nil)
)

func TestContentSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.CreateObject(ctx, storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{
		ProjectID: "e/p", ObjectID: "o", Val: json.RawMessage(`{"b": 1, "a": "é"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := s.CreateTable(ctx, storage.TableCreateReq{Table: storage.TableSchemaForInsert{
		ProjectID: "e/p", Rows: []json.RawMessage{json.RawMessage(`{"q": 1}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Opening again re-runs every migration; they must be idempotent.
	s = openAt(t, dir)
	read, err := s.ReadObject(ctx, storage.ObjReadReq{ProjectID: "e/p", ObjectID: "o", Digest: "latest"})
	if err != nil || read.Obj.Digest != obj.Digest || string(read.Obj.Val) != `{"b": 1, "a": "\u00e9"}` {
		t.Fatalf("read after reopen = %+v, %v", read.Obj, err)
	}
	rows, err := s.QueryTable(ctx, storage.TableQueryReq{ProjectID: "e/p", Digest: tbl.Digest})
	if err != nil || len(rows.Rows) != 1 || string(rows.Rows[0].Val) != `{"q": 1}` {
		t.Fatalf("rows after reopen = %+v, %v", rows, err)
	}
}

func openAt(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestCreateObjectStoresNonFiniteValuesAsJSON(t *testing.T) {
	s := openContentStore(t)
	ctx := context.Background()
	val := json.RawMessage(`{"big": 1e400}`)
	res, err := s.CreateObject(ctx, storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{ProjectID: "e/p", ObjectID: "o", Val: val}})
	if err != nil {
		t.Fatal(err)
	}
	// Python hashes the text {"big": Infinity}; the stored value stays JSON.
	if want := digest.StrDigest(`{"big": Infinity}`); res.Digest != want {
		t.Fatalf("digest = %s, want %s", res.Digest, want)
	}
	read, err := s.ReadObject(ctx, storage.ObjReadReq{ProjectID: "e/p", ObjectID: "o", Digest: res.Digest})
	if err != nil || !json.Valid(read.Obj.Val) {
		t.Fatalf("read = %s, %v", read.Obj.Val, err)
	}
}

func BenchmarkObjCreate(b *testing.B) {
	s := openContentStore(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		val := json.RawMessage(fmt.Sprintf(`{"model": "gpt", "temperature": 0.%d, "prompt": "You answer questions, variant %d"}`, i%10, i))
		if _, err := s.CreateObject(ctx, storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{
			ProjectID: "e/p", ObjectID: fmt.Sprintf("obj-%d", i%50), Val: val}}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "objs/s")
}

func TestConcurrentCreatesKeepIndexesUnique(t *testing.T) {
	s := openContentStore(t)
	ctx := context.Background()
	const writers, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_, err := s.CreateObject(ctx, storage.ObjCreateReq{Obj: storage.ObjSchemaForInsert{
					ProjectID: "e/p", ObjectID: "shared", Val: json.RawMessage(fmt.Sprintf(`{"w": %d, "i": %d}`, w, i))}})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.QueryObjects(ctx, storage.ObjQueryReq{ProjectID: "e/p"})
	if err != nil || len(res.Objs) != writers*each {
		t.Fatalf("%d versions, %v", len(res.Objs), err)
	}
	seen, latest := map[int64]bool{}, 0
	for _, o := range res.Objs {
		seen[o.VersionIndex] = true
		latest += o.IsLatest
	}
	if len(seen) != writers*each || latest != 1 {
		t.Fatalf("indexes %v, %d latest", seen, latest)
	}
}
