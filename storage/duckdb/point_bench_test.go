package duckdb

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// pointBenchBatch is the calls per loading transaction of the point-read
// benchmark (about what the applier's 12 MiB bound lets through); ids are
// recomputed from it.
const pointBenchBatch = 5_000

// BenchmarkPointReads times the reads that open one call or one trace (50
// calls) on a store of WEFT_BENCH_CALLS calls (default 2M), loaded as the
// applier writes them. WEFT_BENCH_DIR keeps the store between runs, so a
// 10M-call store is loaded once:
//
//	WEFT_BENCH_DIR=/tmp/points WEFT_BENCH_CALLS=10000000 go test ./storage/duckdb -run '^$' -bench PointReads
func BenchmarkPointReads(b *testing.B) {
	s, batches := openPointBenchStore(b)
	defer s.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	// As /call/read and a trace's stream_query ask.
	reads := []struct {
		name   string
		filter func(n, i int) storage.CallsFilter
		limit  int64
		want   int
	}{
		{"call", func(n, i int) storage.CallsFilter { return storage.CallsFilter{CallIDs: []string{benchCallID(n, i)}} }, 1, 1},
		{"trace", func(n, i int) storage.CallsFilter {
			return storage.CallsFilter{TraceIDs: []string{benchTraceID(n, i, pointBenchBatch)}}
		}, 0, 50},
	}
	located := s.located
	for _, r := range reads {
		for _, scan := range []bool{false, true} {
			s.located = located
			name := r.name
			if scan {
				s.located, name = nil, r.name+"-without-locator"
			}
			b.Run(name, func(b *testing.B) {
				lat := make([]time.Duration, 0, b.N)
				for range b.N {
					n, i := rng.IntN(batches), rng.IntN(pointBenchBatch)
					begin := time.Now()
					got := countCalls(b, s, storage.CallsQuery{ProjectID: "bench/otel", Filter: r.filter(n, i), Limit: r.limit})
					lat = append(lat, time.Since(begin))
					if got != r.want {
						b.Fatalf("batch %d call %d: %d calls, want %d", n, i, got, r.want)
					}
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			})
		}
	}
}

func countCalls(b *testing.B, s *Store, q storage.CallsQuery) int {
	n := 0
	for _, err := range s.QueryCalls(context.Background(), q) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

// openPointBenchStore opens (and fills up to WEFT_BENCH_CALLS) the store,
// returning how many whole batches it holds.
func openPointBenchStore(b *testing.B) (*Store, int) {
	calls := 2_000_000
	if n, err := strconv.Atoi(os.Getenv("WEFT_BENCH_CALLS")); err == nil && n > 0 {
		calls = n
	}
	dir := os.Getenv("WEFT_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	ctx := context.Background()
	begin := time.Now()
	s, err := Open(ctx, dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("opened in %v", time.Since(begin).Round(time.Millisecond))
	var have int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM calls WHERE project_id = 'bench/otel'").Scan(&have); err != nil {
		b.Fatal(err)
	}
	gen := newOTelBenchGen()
	for n := have / pointBenchBatch; n < calls/pointBenchBatch; n++ {
		if _, err := s.WriteCallOps(ctx, gen.batch(n, pointBenchBatch, time.Now().UTC())); err != nil {
			b.Fatal(err)
		}
	}
	return s, calls / pointBenchBatch
}
