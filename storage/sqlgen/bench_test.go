package sqlgen

import (
	"database/sql"
	"testing"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage"
)

// benchCalls is the size of the benchmark data set, the scale of the
// performance targets (first page with an op filter < 100 ms, count
// < 300 ms on the reference machine).
const benchCalls = 1_000_000

// loadBenchCalls fills db with benchCalls calls of ~1 KB each over 50 ops,
// one in ten in another project.
func loadBenchCalls(b *testing.B, db *sql.DB) {
	b.Helper()
	_, err := db.Exec(`INSERT INTO calls (project_id, id, has_start, has_end, trace_id, parent_id, op_name,
		started_at, ended_at, attributes, inputs, output, summary, wb_user_id)
	SELECT CASE WHEN i % 10 = 0 THEN 'e/other' ELSE 'e/p' END,
		printf('%016x-%08x', 1700000000000 + i, hash(i) % 4294967296), true, true,
		printf('t%08d', i // 10),
		CASE WHEN i % 10 = 1 THEN NULL ELSE printf('%016x-%08x', 1700000000000 + i - i % 10 + 1, hash(i - i % 10 + 1) % 4294967296) END,
		printf('weave:///e/p/op/op_%d:v%d', i % 50, i % 3),
		TIMESTAMP '2024-01-01' + to_milliseconds(i * 100),
		TIMESTAMP '2024-01-01' + to_milliseconds(i * 100 + 50 + i % 1000),
		'{"weave": {"client_version": "0.51.0", "source": "python-sdk"}}',
		'{"model": "gpt-' || (i % 7) || '", "n": ' || (i % 100) || ', "prompt": "' || repeat('lorem ipsum ', 60) || '"}',
		'{"answer": "' || repeat('dolor sit ', 20) || '"}',
		'{"usage": {"gpt-4": {"prompt_tokens": ' || (i % 500) || '}}, "status_counts": {"error": ' || (i % 97 = 0)::INT || '}}',
		'u' || (i % 5)
	FROM range(?) t(i)`, benchCalls)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(storedLatencySQL); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkCalls1M(b *testing.B) {
	db := openDB(b)
	loadBenchCalls(b, db)
	d := NewDuckDB()
	opFilter := storage.CallsFilter{OpNames: []string{"weave:///e/p/op/op_3:*"}}
	defaults, err := pricing.Default()
	if err != nil {
		b.Fatal(err)
	}
	prices := defaults.All()
	cases := []struct {
		name  string
		build func() (Statement, error)
	}{
		{"first_page_op_filter", func() (Statement, error) {
			return CallsSelect(d, storage.CallsQuery{ProjectID: "e/p", Filter: opFilter, Limit: 100})
		}},
		{"first_page_desc", func() (Statement, error) {
			return CallsSelect(d, storage.CallsQuery{ProjectID: "e/p", Limit: 100, SortBy: sortBy("started_at", "desc")})
		}},
		{"first_page_by_tokens", func() (Statement, error) {
			return CallsSelect(d, storage.CallsQuery{ProjectID: "e/p", Limit: 50, SortBy: sortBy("summary.weave.total_tokens", "desc")})
		}},
		{"first_page_by_cost", func() (Statement, error) {
			return CallsSelect(d, storage.CallsQuery{ProjectID: "e/p", Limit: 50, Prices: prices, SortBy: sortBy("summary.weave.cost", "desc")})
		}},
		{"count_op_filter", func() (Statement, error) {
			return CallsCount(d, storage.CallsQuery{ProjectID: "e/p", Filter: opFilter}, 0)
		}},
		{"count_all", func() (Statement, error) { return CallsCount(d, storage.CallsQuery{ProjectID: "e/p"}, 0) }},
		{"count_dynamic_eq", func() (Statement, error) {
			return CallsCount(d, storage.CallsQuery{ProjectID: "e/p", Where: where(eqq("inputs.model", `"gpt-3"`))}, 0)
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				st, err := tc.build()
				if err != nil {
					b.Fatal(err)
				}
				if rows := queryRows(b, db, st); len(rows) == 0 {
					b.Fatal("no rows")
				}
			}
		})
	}
}
