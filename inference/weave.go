package inference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/inference/sse"
	"github.com/weftdev/weft/internal/httpapi"
)

// weaveRequest is the trace API's CompletionsCreateReq.
type weaveRequest struct {
	ProjectID    string          `json:"project_id"`
	Inputs       json.RawMessage `json:"inputs"`
	TrackLLMCall *bool           `json:"track_llm_call"`
	TraceID      *string         `json:"trace_id"`
	ParentID     *string         `json:"parent_id"`
}

// weaveResponse is CompletionsCreateRes.
type weaveResponse struct {
	Response    json.RawMessage `json:"response"`
	WeaveCallID *string         `json:"weave_call_id"`
}

// Members of inputs that configure the reference server's own LLM client
// rather than the model. They are never sent upstream, and credentials
// are never stored.
var (
	clientOnlyInputs = []string{"vertex_credentials", "extra_headers", "api_version", "timeout"}
	templateInputs   = []string{"prompt", "template_vars"}
)

// weaveCreate serves POST /completions/create.
func (g *Gateway) weaveCreate(w http.ResponseWriter, r *http.Request) {
	g.weaveCompletion(w, r, false)
}

// weaveCreateStream serves POST /completions/create_stream: JSON lines,
// a {"_meta": {"weave_call_id"}} line first when the call is tracked.
func (g *Gateway) weaveCreateStream(w http.ResponseWriter, r *http.Request) {
	g.weaveCompletion(w, r, true)
}

func (g *Gateway) weaveCompletion(w http.ResponseWriter, r *http.Request, stream bool) {
	g.metrics.inFlight.Inc()
	defer g.metrics.inFlight.Dec()
	r, release := g.holdBody(w, r)
	defer release() // after finish: the trace keeps the body
	ex, fields, err := g.openWeave(r, stream)
	if err != nil {
		g.metrics.answered("unknown", httpapi.Status(err))
		httpapi.WriteError(w, r, g.logger, err)
		return
	}
	defer g.finish(ex)
	req, model, release, e := g.admit(r.Context(), ex, fields)
	ex.rate.writeHeaders(w.Header())
	if e != nil && e.status == http.StatusTooManyRequests {
		ex.fail(e)
		httpapi.WriteError(w, r, g.logger, httpapi.Errorf(e.status, e.message))
		return
	}
	if e == nil {
		defer release()
		var streamed bool
		if streamed, e = g.weaveForward(w, r, ex, model, req); streamed {
			return
		}
	}
	g.answerWeave(w, r, ex, e, stream)
}

// weaveForward sends the request upstream; streamed reports that the
// answer was relayed as a stream, and is all written.
func (g *Gateway) weaveForward(w http.ResponseWriter, r *http.Request, ex *exchange, model *catalog.Model, req *chatRequest) (streamed bool, e *apiError) {
	g.extendWriteDeadline(w, model)
	ans, e := g.dial(r.Context(), ex, model, req)
	if e != nil {
		return false, e
	}
	if req.stream && ans.status == http.StatusOK {
		g.relayStream(ex, req, ans, newJSONLSink(w, r, ex, g.streamWriteGrace()))
		return true, nil
	}
	ans.close()
	status, out, e := g.plainAnswer(ex, ans)
	if e == nil && status != http.StatusOK {
		e = &apiError{status: status, message: errorMessage(bytes.NewReader(out))}
	}
	return false, e
}

// answerWeave writes the answer of a request that was not streamed
// upstream: the response, or an error inside it, as the reference does.
func (g *Gateway) answerWeave(w http.ResponseWriter, r *http.Request, ex *exchange, e *apiError, stream bool) {
	if e != nil {
		ex.fail(e)
		if ex.clientClosedEarly {
			return
		}
		ex.output, _ = json.Marshal(map[string]string{"error": e.message}) // a string: cannot fail
	}
	if stream {
		out := newJSONLSink(w, r, ex, g.streamWriteGrace())
		if out.open() == nil && e != nil {
			_ = out.fail(e)
		}
		return
	}
	res := weaveResponse{Response: ex.output}
	if !ex.untraced {
		res.WeaveCallID = &ex.callID
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
}

// openWeave reads and authorises a request and starts its exchange.
func (g *Gateway) openWeave(r *http.Request, stream bool) (*exchange, map[string]json.RawMessage, error) {
	body, e := g.readBody(r)
	if e != nil {
		return nil, nil, httpapi.Errorf(e.status, e.message)
	}
	var req weaveRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, httpapi.Errorf(http.StatusBadRequest, "body: must be a CompletionsCreateReq object: "+err.Error())
	}
	p, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Write)
	if err != nil {
		return nil, nil, err
	}
	if err := g.budgetError(req.ProjectID, p.KeyID); err != nil {
		return nil, nil, err
	}
	fields, stored, err := weaveInputs(req.Inputs, stream)
	if err != nil {
		return nil, nil, err
	}
	ex := newExchange(opWeaveCompletion, r.URL.Path, req.ProjectID, p.UserID, g.now())
	ex.inputs, ex.untraced, ex.principal = stored, req.TrackLLMCall != nil && !*req.TrackLLMCall, p
	if req.TraceID != nil && *req.TraceID != "" {
		ex.traceID = *req.TraceID
	}
	if req.ParentID != nil {
		ex.parentID = *req.ParentID
	}
	return ex, fields, nil
}

// weaveInputs splits inputs into what goes upstream and what is stored.
func weaveInputs(raw json.RawMessage, stream bool) (upstream map[string]json.RawMessage, stored json.RawMessage, err error) {
	fields, e := decodeObject(raw)
	if e != nil {
		return nil, nil, httpapi.Errorf(http.StatusBadRequest, "inputs: must be an object with model and messages")
	}
	for _, k := range templateInputs {
		if v, ok := fields[k]; ok && !isNull(v) {
			return nil, nil, httpapi.Errorf(http.StatusBadRequest, fmt.Sprintf("inputs.%s: prompt templates are not supported by this server; send the messages themselves", k))
		}
	}
	for _, k := range clientOnlyInputs {
		delete(fields, k)
	}
	delete(fields, "prompt")
	delete(fields, "template_vars")
	if stored, err = json.Marshal(fields); err != nil {
		return nil, nil, err
	}
	fields["stream"] = json.RawMessage(fmt.Sprint(stream))
	if !stream {
		delete(fields, "stream_options")
	}
	return fields, stored, nil
}

// jsonlSink writes a stream as JSON lines, what the trace API's
// create_stream answers: the call id first, then each chunk, then
// {"error": message} if the stream broke.
type jsonlSink struct {
	streamWriter
	ex *exchange
}

func newJSONLSink(w http.ResponseWriter, r *http.Request, ex *exchange, grace time.Duration) *jsonlSink {
	return &jsonlSink{streamWriter: newStreamWriter(w, r, grace), ex: ex}
}

func (s *jsonlSink) open() error {
	s.w.Header().Set("Content-Type", "application/jsonl")
	s.w.WriteHeader(http.StatusOK)
	if !s.ex.untraced {
		if err := s.line(map[string]any{"_meta": map[string]string{"weave_call_id": s.ex.callID}}); err != nil {
			return err
		}
	}
	return s.flush()
}

// event writes a chunk on one line; comments and payloads that are not
// JSON have no JSON-lines form and are left out.
func (s *jsonlSink) event(ev sse.Event) error {
	if ev.Comment {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, ev.Data) != nil {
		return nil
	}
	b.WriteByte('\n')
	_, err := s.w.Write(b.Bytes())
	return err
}

func (s *jsonlSink) fail(e *apiError) error {
	if err := s.line(map[string]string{"error": e.message}); err != nil {
		return err
	}
	return s.flush()
}

func (s *jsonlSink) done() error { return nil }

func (s *jsonlSink) line(v any) error {
	b, _ := json.Marshal(v) // plain values: cannot fail
	_, err := s.w.Write(append(b, '\n'))
	return err
}
