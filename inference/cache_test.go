package inference

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weftdev/weft/inference/catalog"
)

func testCache(t *testing.T, maxBytes int64) *responseCache {
	t.Helper()
	m, err := newCacheMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return newResponseCache(CacheConfig{MaxBytes: maxBytes, TTL: time.Minute}, m)
}

func key(b byte) cacheKey { return cacheKey{b} }

func TestResponseCache(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	body := func(n int) []byte { return []byte(strings.Repeat("x", n)) }
	type op struct {
		put     bool
		k       byte
		size    int           // put: the body's size
		at      time.Duration // since t0
		wantHit bool          // get
	}
	entry := int64(100 + cacheEntryOverhead) // a 100-byte body's cost
	cases := []struct {
		name          string
		maxBytes      int64
		wholeCache    bool // one entry may take the whole cache
		ops           []op
		wantEvictions float64
		wantBytes     int64
	}{
		{"a put is a hit until the TTL", 100 * entry, false, []op{
			{k: 1, wantHit: false}, {put: true, k: 1, size: 100}, {k: 1, wantHit: true},
			{k: 1, at: 59 * time.Second, wantHit: true}, {k: 1, at: time.Minute, wantHit: false},
		}, 0, 0},
		{"the least recently used goes first", 3 * entry, true, []op{
			{put: true, k: 1, size: 100}, {put: true, k: 2, size: 100}, {put: true, k: 3, size: 100},
			{k: 1, wantHit: true}, // 2 is now the least recently used
			{put: true, k: 4, size: 100},
			{k: 2, wantHit: false}, {k: 1, wantHit: true}, {k: 3, wantHit: true}, {k: 4, wantHit: true},
		}, 1, 3 * entry},
		{"an answer over an eighth of the cache is not kept", 8 * entry, false, []op{
			{put: true, k: 1, size: 101}, {k: 1, wantHit: false}, {put: true, k: 2, size: 100}, {k: 2, wantHit: true},
		}, 0, entry},
		{"a second put replaces the first", 100 * entry, false, []op{
			{put: true, k: 1, size: 100}, {put: true, k: 1, size: 50}, {k: 1, wantHit: true},
		}, 0, 50 + cacheEntryOverhead},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := testCache(t, tc.maxBytes)
			if tc.wholeCache {
				c.maxEntry = c.maxBytes
			}
			for i, o := range tc.ops {
				now := t0.Add(o.at)
				if o.put {
					c.put(key(o.k), body(o.size), now)
					continue
				}
				if _, hit := c.get(key(o.k), now); hit != o.wantHit {
					t.Fatalf("op %d: get(%d) hit = %v, want %v", i, o.k, hit, o.wantHit)
				}
			}
			if got := testutil.ToFloat64(c.m.evictions); got != tc.wantEvictions {
				t.Errorf("evictions %v, want %v", got, tc.wantEvictions)
			}
			if c.bytes != tc.wantBytes || testutil.ToFloat64(c.m.bytes) != float64(tc.wantBytes) {
				t.Errorf("bytes %d (gauge %v), want %d", c.bytes, testutil.ToFloat64(c.m.bytes), tc.wantBytes)
			}
		})
	}
}

func TestWantsCache(t *testing.T) {
	cached := &catalog.Model{ID: "m", Routing: catalog.Routing{Cache: true}}
	plain := &catalog.Model{ID: "m"}
	cases := []struct {
		name   string
		model  *catalog.Model
		body   string
		header string
		want   bool
		status int
	}{
		{"temperature 0 on a caching model", cached, `{"temperature":0}`, "", true, 0},
		{"a seed on a caching model", cached, `{"seed":7,"temperature":1}`, "", true, 0},
		{"sampling is not cached", cached, `{"temperature":0.7}`, "", false, 0},
		{"no temperature is sampling", cached, `{}`, "", false, 0},
		{"a null seed is none", cached, `{"seed":null}`, "", false, 0},
		{"a model without cache", plain, `{"temperature":0}`, "", false, 0},
		{"the header forces it on", plain, `{"temperature":0.7}`, "true", true, 0},
		{"the header forces it off", cached, `{"temperature":0}`, "false", false, 0},
		{"a stream is never cached", cached, `{"temperature":0,"stream":true}`, "true", false, 0},
		{"a bad header is a 400", cached, `{"temperature":0}`, "sometimes", false, http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tc.body), &fields); err != nil {
				t.Fatal(err)
			}
			req := &chatRequest{fields: fields}
			_ = json.Unmarshal(fields["stream"], &req.stream)
			r, _ := http.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
			if tc.header != "" {
				r.Header.Set(cacheHeader, tc.header)
			}
			got, e := wantsCache(r, tc.model, req)
			switch {
			case tc.status != 0 && (e == nil || e.status != tc.status || e.param != cacheHeader):
				t.Fatalf("error %+v, want %d naming %s", e, tc.status, cacheHeader)
			case tc.status == 0 && (e != nil || got != tc.want):
				t.Fatalf("wantsCache = %v, %v; want %v", got, e, tc.want)
			}
		})
	}
}

func TestCacheKeyIgnoresSpacingAndOrder(t *testing.T) {
	parse := func(s string) *chatRequest {
		fields, e := decodeObject([]byte(s))
		if e != nil {
			t.Fatal(e)
		}
		return &chatRequest{fields: fields}
	}
	a := cacheKeyOf("acme/p", "m", "", parse(`{"model":"m","temperature":0,"messages":[{"role":"user","content":"hi"}]}`))
	b := cacheKeyOf("acme/p", "m", "", parse(`{ "messages" : [ {"role":"user", "content":"hi"} ], "temperature":0, "model":"m" }`))
	if a != b {
		t.Error("the same request spaced and ordered differently has another key")
	}
	for name, other := range map[string]cacheKey{
		"another project": cacheKeyOf("rival/p", "m", "", parse(`{"model":"m","temperature":0,"messages":[{"role":"user","content":"hi"}]}`)),
		"another version": cacheKeyOf("acme/p", "m", "sha256:1", parse(`{"model":"m","temperature":0,"messages":[{"role":"user","content":"hi"}]}`)),
		"another message": cacheKeyOf("acme/p", "m", "", parse(`{"model":"m","temperature":0,"messages":[{"role":"user","content":"ho"}]}`)),
	} {
		if other == a {
			t.Errorf("%s has the same key", name)
		}
	}
}
