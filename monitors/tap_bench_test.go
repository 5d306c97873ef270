package monitors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// BenchmarkTap is what the tap adds to a stored batch of 1,000 ended
// calls: for a project without monitors, and for one whose monitor
// samples 10% of its calls (the queue insert itself is the store's).
func BenchmarkTap(b *testing.B) {
	ops := make([]storage.CallOp, 1000)
	for i := range ops {
		ops[i] = storage.CallOp{Part: &storage.CallPart{Kind: storage.PartComplete,
			Call: storage.Call{ProjectID: "acme/app", ID: fmt.Sprintf("019a7c3e-0000-7000-8000-%012d", i)}}}
	}
	for _, tc := range []struct {
		name     string
		monitors map[string][]Monitor
	}{
		{"unwatched", map[string][]Monitor{"acme/other": {{Name: "m", SamplingRate: 1}}}},
		{"sampled 10%", map[string][]Monitor{"acme/app": {{Name: "m", SamplingRate: 0.1}}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			reg := NewRegistry(nil, time.Hour, nil)
			reg.active.Store(&tc.monitors)
			tap := NewTap(&fakeWriter{}, discardQueue{}, reg, time.Now)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tap.WriteCallOps(context.Background(), ops); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ops)), "ns/call")
		})
	}
}

type discardQueue struct{}

func (discardQueue) EnqueueMonitorCalls(context.Context, []storage.MonitorCall) error { return nil }
