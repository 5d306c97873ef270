package inference

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// BenchmarkLimitsHotPath is what limits and budgets add to one request:
// the budget check, the token estimate, admission against a key's and a
// project's limits, the x-ratelimit headers and the correction with the
// recorded usage.
func BenchmarkLimitsHotPath(b *testing.B) {
	body := []byte(`{"model":"bench-echo","stream":false,"max_tokens":64,"messages":[{"role":"user","content":"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation"}]}`)
	fields, e := decodeObject(body)
	if e != nil {
		b.Fatal(e)
	}
	usage := json.RawMessage(`{"prompt_tokens":20,"completion_tokens":12,"total_tokens":32}`)
	g := &Gateway{rates: newRateLimiter(LimitSet{Limits: []LimitRule{
		{Key: anyScope, RequestsPerMinute: 1 << 40, TokensPerMinute: 1 << 50},
		{Project: "bench/inference", RequestsPerMinute: 1 << 40, TokensPerMinute: 1 << 50},
	}}), spendCaps: newSpendCaps(nil), now: time.Now}
	ex := &exchange{project: "bench/inference", usage: usage}
	ex.principal.KeyID = "key_bench"
	h := http.Header{}
	for b.Loop() {
		if e := g.checkBudget(ex.project, ex.principal.KeyID); e != nil {
			b.Fatal(e)
		}
		if e := g.admitRate(ex, fields); e != nil {
			b.Fatal(e)
		}
		ex.rate.writeHeaders(h)
		g.settleRate(ex)
	}
}

// BenchmarkLimitsHotPathParallel is the same from every core at once on
// one project, the contended case.
func BenchmarkLimitsHotPathParallel(b *testing.B) {
	fields, _ := decodeObject([]byte(`{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`))
	g := &Gateway{rates: newRateLimiter(LimitSet{Limits: []LimitRule{
		{Project: "bench/inference", RequestsPerMinute: 1 << 40, TokensPerMinute: 1 << 50},
	}}), spendCaps: newSpendCaps(nil), now: time.Now}
	b.RunParallel(func(pb *testing.PB) {
		h := http.Header{}
		ex := &exchange{project: "bench/inference", usage: json.RawMessage(`{"total_tokens":32}`)}
		for pb.Next() {
			if e := g.admitRate(ex, fields); e != nil {
				b.Fatal(e)
			}
			ex.rate.writeHeaders(h)
			g.settleRate(ex)
		}
	})
}
