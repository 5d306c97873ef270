package inference

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/weftdev/weft/auth"
)

// CompletionError is why Complete gave no answer: Status is the HTTP
// status the gateway would have answered (4xx for the request or the
// model, 429 for a concurrency limit, 5xx for the upstreams).
type CompletionError struct {
	Status  int
	Message string
}

func (e *CompletionError) Error() string { return e.Message }

// StatusCode is Status, for callers that know the error by this method
// alone.
func (e *CompletionError) StatusCode() int { return e.Status }

// Complete runs one unstreamed chat completion for projectID, on behalf
// of p (who must be allowed to write it), through the catalog and its
// upstreams as /v1/chat/completions does, and returns the upstream's
// answer. It is for the server's own LLM work (the LLM-judge action), so
// the call is not traced: the reference does not trace it either. It
// holds one of p's and one of the project's concurrency slots while it
// runs.
func (g *Gateway) Complete(ctx context.Context, p auth.Principal, projectID string, request json.RawMessage) (json.RawMessage, error) {
	if err := p.Authorize(projectID, auth.Write); err != nil {
		return nil, err
	}
	fields, e := decodeObject(request)
	if e != nil {
		return nil, &CompletionError{Status: e.status, Message: e.message}
	}
	delete(fields, "stream")
	ex := newExchange(opChatCompletions, "complete", projectID, p.UserID, g.now())
	ex.principal, ex.untraced = p, true
	defer g.finish(ex)
	req, model, release, e := g.admit(ctx, ex, fields)
	if e != nil {
		ex.fail(e)
		return nil, &CompletionError{Status: e.status, Message: e.message}
	}
	defer release()
	ans, e := g.dial(ctx, ex, model, req)
	if e != nil {
		ex.fail(e)
		return nil, &CompletionError{Status: e.status, Message: e.message}
	}
	ans.close()
	status, out, e := g.plainAnswer(ex, ans)
	switch {
	case e != nil:
		ex.fail(e)
		return nil, &CompletionError{Status: e.status, Message: e.message}
	case status != http.StatusOK:
		return nil, &CompletionError{Status: status, Message: ex.exception}
	}
	return out, nil
}
