package inference

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/weftdev/weft/inference/catalog"
)

// cacheHeader asks for the response cache (true) or against it (false)
// on a request, whatever the model's cache setting; answers carry it as
// hit or miss whenever the cache was consulted.
const cacheHeader = "X-Weft-Cache"

// Cache outcomes of an exchange, as answers and traced calls show them.
const (
	cacheHit  = "hit"
	cacheMiss = "miss"
)

// cachedSummary is a cache hit's summary: no usage, so it costs nothing,
// and the mark the calls API and the UI read.
var cachedSummary = []byte(`{"cached":true}`)

// wantsCache decides whether the cache serves a request: never a stream;
// as the x-weft-cache header says when it is sent; else as the model's
// cache setting says, for a deterministic request (temperature 0 or a
// seed), whose answer is worth repeating.
func wantsCache(r *http.Request, model *catalog.Model, req *chatRequest) (bool, *apiError) {
	forced := false
	if v := r.Header.Get(cacheHeader); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, invalidRequest(cacheHeader, "%s: %q must be true (answer from the cache when possible) or false (always ask the model)", cacheHeader, v)
		}
		if !b {
			return false, nil
		}
		forced = true
	}
	if req.stream {
		return false, nil
	}
	return forced || (model.Routing.Cache && req.deterministic()), nil
}

// deterministic reports a request asking for temperature 0 or a seed.
func (req *chatRequest) deterministic() bool {
	if raw, ok := req.fields["seed"]; ok && !isNull(raw) {
		return true
	}
	var t float64
	raw, ok := req.fields["temperature"]
	return ok && decodeJSON(raw, &t) == nil && t == 0
}

// cacheKeyOf keys a request: the project, the catalog model, the version
// answering it (for a model following an alias) and the request's
// members in sorted order, compacted, so spacing and member order do not
// matter.
func cacheKeyOf(project, model, version string, req *chatRequest) cacheKey {
	var compact bytes.Buffer
	_ = json.Compact(&compact, req.upstreamBody(model)) // members are valid JSON
	h := sha256.New()
	for _, s := range []string{project, model, version} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(compact.Bytes())
	var k cacheKey
	h.Sum(k[:0])
	return k
}

// answerCached answers a request from the response cache when it can;
// answered is false when the request must go upstream (a miss is noted
// for keepCached).
func (g *Gateway) answerCached(w http.ResponseWriter, r *http.Request, ex *exchange, model *catalog.Model, req *chatRequest) (answered bool) {
	use, e := wantsCache(r, model, req)
	if e != nil {
		ex.fail(e)
		e.write(w)
		return true
	}
	if !use || g.cache == nil {
		return false
	}
	ex.cacheKey = cacheKeyOf(ex.project, model.ID, ex.version.Digest, req)
	body, ok := g.cache.get(ex.cacheKey, g.now())
	if !ok {
		ex.cache = cacheMiss
		w.Header().Set(cacheHeader, cacheMiss)
		return false
	}
	ex.cache, ex.output, ex.firstByte = cacheHit, body, g.now().Sub(ex.started)
	w.Header().Set(cacheHeader, cacheHit)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
	return true
}

// keepCached caches a missed request's answer when it is a success.
func (g *Gateway) keepCached(ex *exchange, status int, body []byte) {
	if ex.cache == cacheMiss && status == http.StatusOK {
		g.cache.put(ex.cacheKey, body, g.now())
	}
}
