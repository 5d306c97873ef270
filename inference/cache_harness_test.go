package inference

import (
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/inference/catalog"
)

func TestCacheHitIsTracedAsCachedAndFree(t *testing.T) {
	cachedModel := model("cached", "", on("up", "echo-cached"))
	cachedModel.Cache = true
	h := newHarness(t, func(c *Config) { c.Models = append(c.Models, cachedModel) })
	req := msg("cached", "same question", map[string]any{"temperature": 0})

	status, header, first := h.chat(req, nil)
	if status != 200 || header.Get(cacheHeader) != cacheMiss {
		t.Fatalf("first: status %d, %s %q: %s", status, cacheHeader, header.Get(cacheHeader), first)
	}
	served := h.up.Served()
	status, header, second := h.chat(req, nil)
	if status != 200 || header.Get(cacheHeader) != cacheHit || string(second) != string(first) || h.up.Served() != served {
		t.Fatalf("second: status %d, %s %q, upstream asked %d more:\n%s\n%s", status, cacheHeader, header.Get(cacheHeader), h.up.Served()-served, second, first)
	}
	call := h.waitCall(header.Get(callIDHeader))
	if string(call.Summary) != `{"cached":true}` || string(call.Output) != strings.TrimSpace(string(first)) || call.Exception != nil {
		t.Errorf("the hit's call: summary %s, output %s", call.Summary, call.Output)
	}
	if attrs := field(t, call.Attributes, "inference", "cache"); attrs != cacheHit {
		t.Errorf("attributes.inference.cache = %v: %s", attrs, call.Attributes)
	}
	for name, want := range map[string]float64{"weft_inference_cache_hits": 1, "weft_inference_cache_misses": 1} {
		if got := metricValue(t, h, name, ""); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := metricValue(t, h, "weft_inference_cache_bytes", ""); got < float64(len(first)) {
		t.Errorf("weft_inference_cache_bytes = %v, want at least the answer (%d)", got, len(first))
	}

	cases := []struct {
		name    string
		body    map[string]any
		headers map[string]string
		want    string // the answer's x-weft-cache
	}{
		{"another project misses", req, map[string]string{"Service-Project": "acme/other"}, cacheMiss},
		{"sampling bypasses the cache", msg("cached", "same question", map[string]any{"temperature": 0.9}), nil, ""},
		{"the header forces the cache off", req, map[string]string{cacheHeader: "false"}, ""},
		{"the header forces it on for a model without cache", msg("echo-model", "q", map[string]any{"temperature": 0.9}), map[string]string{cacheHeader: "true"}, cacheMiss},
		{"and the repeat hits", msg("echo-model", "q", map[string]any{"temperature": 0.9}), map[string]string{cacheHeader: "true"}, cacheHit},
	}
	for _, tc := range cases {
		status, header, body := h.chat(tc.body, tc.headers)
		if status != 200 || header.Get(cacheHeader) != tc.want {
			t.Errorf("%s: status %d, %s %q, want %q: %s", tc.name, status, cacheHeader, header.Get(cacheHeader), tc.want, body)
		}
	}
}

func TestCacheHeaderMustBeABoolean(t *testing.T) {
	h := newHarness(t)
	status, _, body := h.chat(msg("echo-model", "q", nil), map[string]string{cacheHeader: "maybe"})
	if status != http.StatusBadRequest || field(t, body, "error", "param") != cacheHeader ||
		!strings.Contains(field(t, body, "error", "message").(string), "must be true") {
		t.Fatalf("status %d: %s", status, body)
	}
}

func TestCacheOffWithoutBytes(t *testing.T) {
	cachedModel := model("cached", "", on("up", "echo-cached"))
	cachedModel.Routing = catalog.Routing{Cache: true}
	h := newHarness(t, func(c *Config) { c.Models = append(c.Models, cachedModel); c.Cache.MaxBytes = 0 })
	for range 2 {
		if status, header, _ := h.chat(msg("cached", "q", map[string]any{"temperature": 0}), nil); status != 200 || header.Get(cacheHeader) != "" {
			t.Fatalf("status %d, %s %q with the cache off", status, cacheHeader, header.Get(cacheHeader))
		}
	}
}
