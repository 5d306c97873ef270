package inference

import (
	"container/list"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// cacheKey identifies a cached answer: a SHA-256 of the project, the
// catalog model, the version answering it and the canonical request.
type cacheKey [32]byte

// cacheEntryOverhead is what an entry costs beyond its body: the key
// (twice, in the map and the entry), the list element and the map slot.
const cacheEntryOverhead = 160

// responseCache keeps upstream answers to deterministic requests, least
// recently used first out, within maxBytes, each for ttl. One mutex
// guards it: what it holds it for is a map lookup and a list move.
type responseCache struct {
	maxBytes int64
	maxEntry int64 // an eighth of maxBytes: one answer must not evict many
	ttl      time.Duration
	m        *cacheMetrics

	mu      sync.Mutex
	bytes   int64
	lru     list.List // of *cacheEntry, most recently used first
	entries map[cacheKey]*list.Element
}

type cacheEntry struct {
	key     cacheKey
	body    []byte
	expires time.Time
}

func (e *cacheEntry) size() int64 { return int64(len(e.body)) + cacheEntryOverhead }

// cacheMetrics are the cache's counters.
type cacheMetrics struct {
	hits, misses, evictions prometheus.Counter
	bytes                   prometheus.Gauge
}

func newCacheMetrics(reg prometheus.Registerer) (*cacheMetrics, error) {
	m := &cacheMetrics{
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_inference_cache_hits",
			Help: "Chat requests answered from the response cache."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_inference_cache_misses",
			Help: "Cacheable chat requests the response cache could not answer."}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_inference_cache_evictions",
			Help: "Answers dropped from the response cache to stay within inference.cache.max_bytes."}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "weft_inference_cache_bytes",
			Help: "Bytes the response cache holds, bodies and bookkeeping."}),
	}
	for _, c := range []prometheus.Collector{m.hits, m.misses, m.evictions, m.bytes} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("inference cache metrics: %w", err)
		}
	}
	return m, nil
}

// newResponseCache is nil, a cache that is off, when maxBytes is 0.
func newResponseCache(cfg CacheConfig, m *cacheMetrics) *responseCache {
	if cfg.MaxBytes <= 0 {
		return nil
	}
	return &responseCache{maxBytes: cfg.MaxBytes, maxEntry: cfg.MaxBytes / 8, ttl: cfg.TTL, m: m, entries: map[cacheKey]*list.Element{}}
}

// get returns the answer cached under k; the body must not be changed.
func (c *responseCache) get(k cacheKey, now time.Time) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[k]
	if ok {
		e := el.Value.(*cacheEntry)
		if now.Before(e.expires) {
			c.lru.MoveToFront(el)
			c.m.hits.Inc()
			return e.body, true
		}
		c.remove(el)
	}
	c.m.misses.Inc()
	return nil, false
}

// put caches body under k (the cache keeps body: the caller must not
// change it), evicting the least recently used answers to make room. An
// answer over maxEntry is not kept.
func (c *responseCache) put(k cacheKey, body []byte, now time.Time) {
	e := &cacheEntry{key: k, body: body, expires: now.Add(c.ttl)}
	if e.size() > c.maxEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[k]; ok {
		c.remove(el) // a concurrent miss answered first: keep the newer
	}
	for c.bytes+e.size() > c.maxBytes {
		c.remove(c.lru.Back())
		c.m.evictions.Inc()
	}
	c.entries[k] = c.lru.PushFront(e)
	c.bytes += e.size()
	c.m.bytes.Set(float64(c.bytes))
}

// remove drops an entry; c.mu is held.
func (c *responseCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.bytes -= e.size()
	c.m.bytes.Set(float64(c.bytes))
}
