package tracemetricsprocessor

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// BenchmarkObserve is the CPU trace metrics add per stored call (one op
// is one call), counted as the pipeline counts them: batches of 100 over
// 20 projects and 10 ops each, every call with a new id.
//
//	go test -run '^$' -bench Observe -benchmem ./processor/tracemetricsprocessor
func BenchmarkObserve(b *testing.B) {
	const usage = `{"usage": {"gpt-4.1": {"prompt_tokens": 812, "completion_tokens": 96, "total_tokens": 908, "requests": 1}}, "weave": {"status": "success"}}`
	cases := []struct {
		name string
		// parts builds the parts of one call; their kinds say how the
		// call reaches the processor.
		parts func(project, id, op string, at time.Time) []storage.CallOp
	}{
		{"complete/no-usage", func(p, id, op string, at time.Time) []storage.CallOp {
			return []storage.CallOp{complete(p, id, op, at, at.Add(time.Second), "")}
		}},
		{"complete/usage", func(p, id, op string, at time.Time) []storage.CallOp {
			return []storage.CallOp{complete(p, id, op, at, at.Add(time.Second), usage)}
		}},
		{"start-then-end/usage", func(p, id, op string, at time.Time) []storage.CallOp {
			return []storage.CallOp{start(p, id, op, at), end(p, id, at.Add(time.Second), nil, usage)}
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			p := newTestProcessor(b, DefaultConfig(), stored, nil)
			const batch = 100
			// Parts of every call, made before timing; starts go in one
			// batch and ends in the next, as for calls longer than a batch.
			var starts, ends [][]storage.CallOp
			for i := 0; i < b.N; i += batch {
				var s, e []storage.CallOp
				for j := i; j < i+batch && j < b.N; j++ {
					parts := tc.parts("entity/project-"+strconv.Itoa(j%20), "call-"+strconv.Itoa(j),
						"weave:///entity/project/op/op"+strconv.Itoa(j%10)+":digest", t0)
					if len(parts) == 2 {
						s = append(s, parts[0])
					}
					e = append(e, parts[len(parts)-1])
				}
				starts, ends = append(starts, s), append(ends, e)
			}
			now := time.Now()
			runtime.GC() // the setup's garbage is not the processor's
			b.ReportAllocs()
			b.ResetTimer()
			for i := range ends {
				if len(starts[i]) > 0 {
					p.observe(starts[i], now)
				}
				p.observe(ends[i], now)
			}
		})
	}
}
