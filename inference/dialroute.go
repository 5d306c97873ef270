package inference

import (
	"context"
	"time"

	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/internal/backoff"
)

// route sends a request to the model's upstreams until one answers with
// something to relay. Each attempt goes to an upstream the balance
// policy picks among those not tried yet in this round and not cooling
// down; when every upstream of the round failed, nextAttempt decides
// whether a new round starts, and after what pause.
func (g *Gateway) route(ctx context.Context, ex *exchange, model *catalog.Model, path string, body func(upstreamModel string) []byte, stream bool) (*answer, *apiError) {
	var (
		last    *failure
		tried   uint64
		retries int
		retry   bool // the next attempt repeats a failed round
	)
	first := g.now()
	for {
		pos, probe, ok := g.routes.pick(model, tried, g.now())
		if !ok {
			if last == nil {
				return nil, unavailable(g.routes.coolingFor(model, g.now()),
					"Every upstream of model %q failed repeatedly and is cooling down; please try again later", model.ID)
			}
			return nil, g.exhausted(model.ID, last)
		}
		up := &model.Upstreams[pos]
		name := g.upstreamName(ex, up)
		ans, fail := g.tryUpstream(ctx, ex, model.ID, up, name, probe, retry, path, body(name), stream)
		if fail == nil {
			return ans, nil
		}
		if ctx.Err() != nil {
			ex.clientClosedEarly = true
			return nil, &apiError{status: 499, typ: "invalid_request_error", message: "the client closed the request before an upstream answered"}
		}
		last, tried = fail, tried|1<<pos
		untried := g.routes.choose(model, tried, g.now()) >= 0
		again, pause := g.cfg.Retry.nextAttempt(fail, untried, retries, g.now().Sub(first))
		if !again {
			return nil, g.exhausted(model.ID, last)
		}
		if retry = !untried; retry {
			retries++
			tried = 0
			if !backoff.Sleep(ctx, pause) {
				ex.clientClosedEarly = true
				return nil, &apiError{status: 499, typ: "invalid_request_error", message: "the client closed the request while the gateway waited to retry"}
			}
		}
	}
}

// tryUpstream makes one attempt on up, keeping its count in flight, its
// breaker and its metrics, and the attempt in the trace.
func (g *Gateway) tryUpstream(ctx context.Context, ex *exchange, modelID string, up *catalog.Upstream, name string, probe, retry bool, path string, body []byte, stream bool) (*answer, *failure) {
	st := g.routes.state(up)
	st.requests.Inc()
	if retry {
		st.retries.Inc()
	}
	st.enter()
	start := time.Now()
	ans, fail := g.client.try(ctx, *up, path, body, stream)
	at := attempt{Provider: up.Provider.Name, Model: name, DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	if fail == nil {
		// Held in flight until the answer is closed: a stream keeps its
		// upstream busy to its end.
		ans.busy = st
		at.Status = ans.status
		ex.attempts = append(ex.attempts, at)
		ex.served = up
		if name != up.Model { // a followed alias's version
			ex.served = &catalog.Upstream{Provider: up.Provider, Model: name, Weight: up.Weight, Index: up.Index}
		}
		if ans.status/100 == 2 {
			st.breaker.success(probe)
		} else {
			st.breaker.abandon(g.now(), probe) // a refusal of the request itself
		}
		return ans, nil
	}
	st.leave()
	at.Status, at.Error = fail.status, fail.message
	ex.attempts = append(ex.attempts, at)
	switch {
	case ctx.Err() != nil:
		st.breaker.abandon(g.now(), probe)
		return nil, fail
	case countsAgainst(fail):
		st.breaker.failure(g.now(), probe)
	default:
		st.breaker.abandon(g.now(), probe)
	}
	st.failures.Inc()
	g.metrics.upstreamFailures.WithLabelValues(up.Provider.Name).Inc()
	g.logger.Info("inference: an upstream attempt failed; the gateway retries or fails over as inference.retry and the breaker say; if weft_inference_upstream_failures keeps rising for one provider, check that provider", "model", modelID, "provider", up.Provider, "upstream_model", name, "retry", retry, "err", fail)
	return nil, fail
}
