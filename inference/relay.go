package inference

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/weftdev/weft/inference/catalog"
)

// dial tries the model's upstreams until one answers with something to
// relay. A connection error, a timeout, a stream that fails before its
// first byte, or a status other than an answer or a refusal of the
// request (see passesThrough) moves to the next, or retries (see route).
func (g *Gateway) dial(ctx context.Context, ex *exchange, model *catalog.Model, req *chatRequest) (*answer, *apiError) {
	return g.dialPath(ctx, ex, model, chatPath, req.upstreamBody, req.stream)
}

// dialPath is dial for any upstream path: body renders the request for
// an upstream's model name. Balancing, retries and breakers: see route.
func (g *Gateway) dialPath(ctx context.Context, ex *exchange, model *catalog.Model, path string, body func(upstreamModel string) []byte, stream bool) (*answer, *apiError) {
	return g.route(ctx, ex, model, path, body, stream)
}

// exhausted is the answer once every upstream failed.
func (g *Gateway) exhausted(model string, last *failure) *apiError {
	switch {
	case last == nil:
		return internalError(g.cfg.RetryAfter) // unreachable: a model has at least one upstream
	case last.status == 0:
		return unavailable(g.cfg.RetryAfter, "No upstream of model %q could be reached (%s); please try again later", model, last.message)
	case last.status == http.StatusTooManyRequests || last.status == http.StatusServiceUnavailable:
		return unavailable(g.cfg.RetryAfter, "The engine is currently overloaded, please try again later")
	}
	return badGateway(g.cfg.RetryAfter, "The upstream of model %q failed (%s)", model, last.Error())
}

// plainAnswer checks an unstreamed answer and records it. A success must
// be a JSON object; a refusal of the request is relayed in the OpenAI
// error shape.
func (g *Gateway) plainAnswer(ex *exchange, ans *answer) (int, []byte, *apiError) {
	body := bytes.TrimSpace(ans.body)
	if ans.status/100 != 2 {
		msg := errorMessage(bytes.NewReader(body))
		e := &apiError{status: ans.status, typ: "invalid_request_error", message: msg}
		ex.fail(&apiError{status: ans.status, message: fmt.Sprintf("the upstream refused the request (%d): %s", ans.status, msg)})
		if isErrorObject(body) {
			return ans.status, body, nil
		}
		return 0, nil, e
	}
	var parsed struct {
		Usage json.RawMessage `json:"usage"`
	}
	if len(body) == 0 || body[0] != '{' || decodeJSON(body, &parsed) != nil {
		return 0, nil, badGateway(g.cfg.RetryAfter, "The upstream of model %q answered a body that is not a JSON object", ex.modelID)
	}
	ex.status, ex.output, ex.firstByte = ans.status, body, g.now().Sub(ex.started)
	if len(parsed.Usage) > 0 && parsed.Usage[0] == '{' {
		ex.usage = parsed.Usage
	}
	return ans.status, body, nil
}

// isErrorObject reports an OpenAI-shaped error body.
func isErrorObject(body []byte) bool {
	var e struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	return json.Unmarshal(body, &e) == nil && e.Error != nil
}
