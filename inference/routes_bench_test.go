package inference

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/inference/catalog"
)

// BenchmarkRouteBookkeeping is what routing adds to one request: the
// balance pick and breaker check, the in-flight and attempt counts, and
// the breaker's report of the answer.
func BenchmarkRouteBookkeeping(b *testing.B) {
	for _, balance := range []string{catalog.BalanceFailover, catalog.BalanceWeighted, catalog.BalanceLeastBusy} {
		b.Run(balance, func(b *testing.B) {
			r, m := benchRoutes(b, balance)
			b.ReportAllocs()
			for b.Loop() {
				now := time.Now()
				pos, probe, ok := r.pick(m, 0, now)
				if !ok {
					b.Fatal("no upstream")
				}
				st := r.state(&m.Upstreams[pos])
				st.requests.Inc()
				st.enter()
				st.breaker.success(probe)
				st.leave()
			}
		})
	}
}

// BenchmarkCacheDecision is the cache's cost on a request it does not
// serve (the common case), and on a hit: the canonical key and lookup.
func BenchmarkCacheDecision(b *testing.B) {
	body := []byte(`{"model":"bench","temperature":0,"max_tokens":64,"messages":[{"role":"user","content":"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation"}]}`)
	fields, e := decodeObject(body)
	if e != nil {
		b.Fatal(e)
	}
	req, e := parseChatRequest(fields)
	if e != nil {
		b.Fatal(e)
	}
	r, _ := http.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	b.Run("not cached", func(b *testing.B) {
		m := &catalog.Model{ID: "bench"}
		b.ReportAllocs()
		for b.Loop() {
			if use, _ := wantsCache(r, m, req); use {
				b.Fatal("cached")
			}
		}
	})
	b.Run("hit", func(b *testing.B) {
		m := &catalog.Model{ID: "bench", Routing: catalog.Routing{Cache: true}}
		cm, err := newCacheMetrics(prometheus.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		c := newResponseCache(CacheConfig{MaxBytes: 1 << 20, TTL: time.Hour}, cm)
		c.put(cacheKeyOf("bench/p", m.ID, "", req), []byte(`{"id":"x"}`), time.Now())
		b.ReportAllocs()
		for b.Loop() {
			if use, _ := wantsCache(r, m, req); !use {
				b.Fatal("not cached")
			}
			if _, ok := c.get(cacheKeyOf("bench/p", m.ID, "", req), time.Now()); !ok {
				b.Fatal("miss")
			}
		}
	})
}

// BenchmarkFollowAlias is the version pick of a model following an
// alias with a canary.
func BenchmarkFollowAlias(b *testing.B) {
	m := &catalog.Model{ID: "clf", Routing: catalog.Routing{Follow: &catalog.Follow{Collection: "a/b/c", Alias: "production"}}}
	f := &follower{}
	f.table.Store(&aliasTable{"clf": {primary: &aliasVersion{Digest: "d1", ServedAs: "v1"}, canary: &aliasVersion{Digest: "d2", ServedAs: "v2"}, weight: 0.2}})
	g := &Gateway{follower: f}
	ex := &exchange{}
	b.ReportAllocs()
	for b.Loop() {
		if e := g.followAlias(ex, m); e != nil {
			b.Fatal(e)
		}
	}
}

func benchRoutes(b *testing.B, balance string) (*routes, *catalog.Model) {
	cfg := DefaultConfig()
	cfg.Providers = []catalog.ProviderConfig{{Name: "p", BaseURL: "http://127.0.0.1:1/v1"}}
	cfg.Models = []catalog.ModelConfig{{ID: "m", Routing: catalog.Routing{Balance: balance},
		Upstreams: []catalog.UpstreamConfig{{Provider: "p", Model: "a", Weight: 3}, {Provider: "p", Model: "b"}, {Provider: "p", Model: "c"}}}}
	cat, err := catalog.New(cfg.Providers, cfg.Models, nil)
	if err != nil {
		b.Fatal(err)
	}
	r, err := newRoutes(cfg, cat, prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	m, _ := cat.Lookup("m")
	return r, m
}
