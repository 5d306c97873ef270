package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/weftdev/weft/storage"
)

func benchRows(n int) []json.RawMessage {
	rows := make([]json.RawMessage, n)
	for i := range rows {
		rows[i] = json.RawMessage(fmt.Sprintf(
			`{"question": "What is %d + %d?", "expected": "%d", "meta": {"source": "synthetic", "difficulty": %d.5}}`,
			i, i+1, 2*i+1, i%5))
	}
	return rows
}

func BenchmarkTableCreate10k(b *testing.B) {
	const n = 10_000
	s := openContentStore(b)
	ctx := context.Background()
	rows := benchRows(n)
	round := 0
	for b.Loop() {
		// A fresh first row per round makes every table (and one row) new.
		rows[0] = json.RawMessage(fmt.Sprintf(`{"round": %d}`, round))
		round++
		if _, err := s.CreateTable(ctx, storage.TableCreateReq{Table: storage.TableSchemaForInsert{ProjectID: "e/p", Rows: rows}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkTableQueryPage(b *testing.B) {
	const n, pageSize = 10_000, 100
	s := openContentStore(b)
	ctx := context.Background()
	res, err := s.CreateTable(ctx, storage.TableCreateReq{Table: storage.TableSchemaForInsert{ProjectID: "e/p", Rows: benchRows(n)}})
	if err != nil {
		b.Fatal(err)
	}
	limit := int64(pageSize)
	i := 0
	for b.Loop() {
		offset := int64((i * pageSize) % n)
		i++
		page, err := s.QueryTable(ctx, storage.TableQueryReq{ProjectID: "e/p", Digest: res.Digest, Offset: &offset, Limit: &limit})
		if err != nil || len(page.Rows) != pageSize {
			b.Fatalf("page at %d: %d rows, %v", offset, len(page.Rows), err)
		}
	}
	b.ReportMetric(float64(b.N*pageSize)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkTableQuerySorted(b *testing.B) {
	const n = 10_000
	s := openContentStore(b)
	ctx := context.Background()
	res, err := s.CreateTable(ctx, storage.TableCreateReq{Table: storage.TableSchemaForInsert{ProjectID: "e/p", Rows: benchRows(n)}})
	if err != nil {
		b.Fatal(err)
	}
	limit := int64(100)
	sortBy := []storage.SortBy{{Field: "meta.difficulty", Direction: "desc"}}
	for b.Loop() {
		if _, err := s.QueryTable(ctx, storage.TableQueryReq{ProjectID: "e/p", Digest: res.Digest, Limit: &limit, SortBy: sortBy}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "rows/s")
}
