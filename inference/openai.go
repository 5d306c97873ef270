package inference

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/inference/catalog"
)

// callIDHeader names the traced call on every answer that has one.
const callIDHeader = "X-Weft-Call-Id"

// chatCompletions serves POST /v1/chat/completions.
func (g *Gateway) chatCompletions(w http.ResponseWriter, r *http.Request) {
	g.metrics.inFlight.Inc()
	defer g.metrics.inFlight.Dec()
	r, release := g.holdBody(w, r)
	defer release() // after finish: the trace keeps the body
	ex, fields, e := g.openChat(r)
	if e != nil {
		g.metrics.answered("unknown", e.status)
		e.write(w)
		return
	}
	defer g.finish(ex)
	g.serveChat(w, r, ex, fields)
}

// openChat authenticates, resolves the project and reads the body. What
// fails here is not traced: there is no project, or no request, to trace.
func (g *Gateway) openChat(r *http.Request) (*exchange, map[string]json.RawMessage, *apiError) {
	p, e := g.authenticate(r)
	if e != nil {
		return nil, nil, e
	}
	project, e := g.project(r, p, auth.Write)
	if e != nil {
		return nil, nil, e
	}
	if e := g.checkBudget(project, p.KeyID); e != nil {
		return nil, nil, e
	}
	body, e := g.readBody(r)
	if e != nil {
		return nil, nil, e
	}
	fields, e := decodeObject(body)
	if e != nil {
		return nil, nil, e
	}
	ex := newExchange(opChatCompletions, r.URL.Path, project, p.UserID, g.now())
	ex.inputs, ex.principal = body, p
	return ex, fields, nil
}

func (g *Gateway) serveChat(w http.ResponseWriter, r *http.Request, ex *exchange, fields map[string]json.RawMessage) {
	req, model, release, e := g.admit(r.Context(), ex, fields)
	ex.rate.writeHeaders(w.Header())
	if !ex.untraced {
		w.Header().Set(callIDHeader, ex.callID)
	}
	if e != nil {
		ex.fail(e)
		e.write(w)
		return
	}
	defer release()
	if g.answerCached(w, r, ex, model, req) {
		return
	}
	g.extendWriteDeadline(w, model)
	ans, e := g.dial(r.Context(), ex, model, req)
	if e != nil {
		ex.fail(e)
		if !ex.clientClosedEarly {
			e.write(w)
		}
		return
	}
	if req.stream && ans.status == http.StatusOK {
		g.relayStream(ex, req, ans, newSSESink(w, r, ex.callID, g.streamWriteGrace()))
		return
	}
	ans.close()
	status, out, e := g.plainAnswer(ex, ans)
	if e != nil {
		ex.fail(e)
		e.write(w)
		return
	}
	g.keepCached(ex, status, out)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// admit validates a request, finds its model, counts it against the
// rate limits and takes one of the key's concurrency slots and one of
// the project's: a key naming many projects still has only its own cap.
func (g *Gateway) admit(ctx context.Context, ex *exchange, fields map[string]json.RawMessage) (*chatRequest, *catalog.Model, func(), *apiError) {
	req, e := parseChatRequest(fields)
	if e != nil {
		return nil, nil, nil, e
	}
	ex.modelID, ex.stream = req.model, req.stream
	model, e := g.lookup(ctx, ex.principal, req.model)
	if e != nil {
		return nil, nil, nil, e
	}
	if e := g.followAlias(ex, model); e != nil {
		return nil, nil, nil, e
	}
	release, e := g.rateAndSlots(ex, fields)
	if e != nil {
		return nil, nil, nil, e
	}
	return req, model, release, nil
}

// slots takes one of the key's concurrency slots and one of the
// project's; refused, the exchange is not traced.
func (g *Gateway) slots(ex *exchange) (func(), *apiError) {
	releaseKey, limit, ok := g.keyCaps.acquire(ex.principal.KeyID)
	if !ok {
		// Shedding load: tracing what was shed would add to it.
		ex.untraced = true
		return nil, keyConcurrencyLimited(limit, g.cfg.RetryAfter)
	}
	release, limit, ok := g.limits.acquire(ex.project)
	if !ok {
		releaseKey()
		ex.untraced = true
		return nil, concurrencyLimited(ex.project, limit, g.cfg.RetryAfter)
	}
	return func() { release(); releaseKey() }, nil
}

// finish counts the answer and hands the call to the recorder.
func (g *Gateway) finish(ex *exchange) {
	label := "unknown"
	if _, ok := g.catalog.Lookup(ex.modelID); ok {
		label = ex.modelID
	}
	g.metrics.answered(label, ex.status)
	g.settleRate(ex)
	if !ex.untraced {
		g.recorder.Record(ex.call(g.now()))
	}
}

// extendWriteDeadline lets an answer take as long as every upstream may:
// the listener's write timeout is sized for the trace API, not for a
// model thinking for minutes.
func (g *Gateway) extendWriteDeadline(w http.ResponseWriter, model *catalog.Model) {
	longest := g.cfg.Timeout
	for _, up := range model.Upstreams {
		longest = max(longest, up.Provider.Timeout)
	}
	attempts := len(model.Upstreams) * (g.cfg.Retry.MaxRetries + 1)
	d := time.Duration(attempts)*longest + g.cfg.Retry.MaxElapsed + g.streamWriteGrace()
	_ = http.NewResponseController(w).SetWriteDeadline(g.now().Add(d))
}

// streamWriteGrace is how long a stream may go without writing: the
// upstream's allowed silence, and time to write what comes after it.
func (g *Gateway) streamWriteGrace() time.Duration { return g.cfg.StreamIdleTimeout + 30*time.Second }

type modelEntry struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	Root    string `json:"root"`
}

func entry(m *catalog.Model) modelEntry {
	return modelEntry{ID: m.ID, Object: "model", Created: m.Created, OwnedBy: m.OwnedBy, Root: m.ID}
}

// listModels serves GET /v1/models: every model that is not retired.
func (g *Gateway) listModels(w http.ResponseWriter, r *http.Request) {
	if e := g.checkReader(r); e != nil {
		e.write(w)
		return
	}
	data := make([]modelEntry, 0, len(g.catalog.Listed()))
	for _, m := range g.catalog.Listed() {
		data = append(data, entry(m))
	}
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

// getModel serves GET /v1/models/{id}; ids may hold slashes.
func (g *Gateway) getModel(w http.ResponseWriter, r *http.Request) {
	if e := g.checkReader(r); e != nil {
		e.write(w)
		return
	}
	id := r.PathValue("id")
	m, ok := g.catalog.Lookup(id)
	if !ok || m.Retired() {
		modelNotFound(id).write(w)
		return
	}
	writeJSON(w, entry(m))
}

// checkReader authenticates a model-list request, and checks a project
// header when one is sent.
func (g *Gateway) checkReader(r *http.Request) *apiError {
	p, e := g.authenticate(r)
	if e == nil && (r.Header.Get(serviceProjectHeader) != "" || r.Header.Get(openAIProjectHeader) != "") {
		_, e = g.project(r, p, auth.Read)
	}
	return e
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v) // plain values: cannot fail
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
