package traceapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/traceapi"
)

// BenchmarkOtherTenantDuringHostileQueries measures one tenant's
// /call/read on a store of 100,000 calls of another tenant: alone, while
// that other key sends hostile-but-allowed /calls/stream_query requests
// from eight clients (a $or of 100 $contains, the most operands allowed;
// a $in of 1,000 literals, the longest list allowed; ten sort keys on JSON
// paths, the most allowed), under the default budget, and the same with
// the budget lifted (no bound on reads at once, an hour per read) for
// comparison. Each reports the reads' p50 and p99. -benchtime 300x gives
// steady percentiles.
func BenchmarkOtherTenantDuringHostileQueries(b *testing.B) {
	s := seedBudgetStore(b, 100_000)
	bodies := slices.Sorted(func(yield func(string) bool) {
		for _, body := range hostileQueries() {
			if !yield(body) {
				return
			}
		}
	})
	lifted := traceapi.Budget{MaxDuration: time.Hour, MaxConcurrent: 1000, MaxConcurrentPerKey: 1000, MaxWait: time.Hour}
	for _, tc := range []struct {
		name    string
		budget  traceapi.Budget
		hostile int
	}{
		{"alone", traceapi.DefaultBudget(), 0},
		{"hostile key, default budget", traceapi.DefaultBudget(), 8},
		{"hostile key, budget lifted", lifted, 8},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := budgetServer(b, s, traceapi.Settings{Budget: tc.budget})
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var mu sync.Mutex
			outcomes := map[string]int{}
			for g := range tc.hostile {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := g; ctx.Err() == nil; i++ {
						a := postAsContext(ctx, srv, hostileKey, "/calls/stream_query", bodies[i%len(bodies)])
						if ctx.Err() != nil {
							return
						}
						mu.Lock()
						outcomes[fmt.Sprint(a.status, " ", settingIn(a.reason))]++
						mu.Unlock()
					}
				}()
			}
			defer func() { stop(); wg.Wait() }() // a cancelled request interrupts its statement
			if tc.hostile > 0 {
				time.Sleep(2 * time.Second) // the hostile queries are running
			}
			var lat []time.Duration
			i := 0
			for b.Loop() {
				a := postAs(srv, victimKey, "/call/read", callReadBody(i*37%victimCalls))
				if a.status != http.StatusOK || a.err != nil {
					b.Fatalf("read %d: status %d, %q, %v", i, a.status, a.reason, a.err)
				}
				lat = append(lat, a.took)
				i++
			}
			p50, p99 := percentiles(lat)
			b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
			if tc.hostile > 0 {
				mu.Lock()
				b.Logf("hostile answers while %d reads ran: %v", len(lat), outcomes)
				mu.Unlock()
			}
		})
	}
}
