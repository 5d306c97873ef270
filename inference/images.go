package inference

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/inference/catalog"
	"github.com/weftdev/weft/internal/httpapi"
)

// opImageGeneration is the op name the reference traces image requests
// under.
const opImageGeneration = "weave.image_generation_create"

// maxImagesPerRequest bounds n: each image is a large answer.
const maxImagesPerRequest = 10

// defaultImageSize is the size the reference asks every model for.
const defaultImageSize = "1024x1024"

// imageRequest is ImageGenerationCreateReq.
type imageRequest struct {
	ProjectID    string      `json:"project_id"`
	Inputs       imageInputs `json:"inputs"`
	TrackLLMCall *bool       `json:"track_llm_call"`
}

// imageInputs is ImageGenerationRequestInputs.
type imageInputs struct {
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	N      *int   `json:"n"`
}

// imageCreate serves POST /image/create: one image request to the
// model's upstreams, in failover order, traced as the reference traces
// it unless track_llm_call is false. Requests the gateway cannot serve
// are errors in the trace API's shape; what the upstream answers,
// failures included, is the response, as the reference answers it.
func (g *Gateway) imageCreate(w http.ResponseWriter, r *http.Request) {
	g.metrics.inFlight.Inc()
	defer g.metrics.inFlight.Dec()
	r, release := g.holdBody(w, r)
	defer release() // after finish: the trace keeps the body
	ex, model, err := g.openImage(r)
	if err != nil {
		status := httpapi.Status(err)
		g.metrics.answered("unknown", status)
		if status == http.StatusNotImplemented {
			// Not a failure to hide: the reason says what to configure.
			httpapi.WriteJSON(w, status, map[string]string{"reason": err.Error()})
			return
		}
		httpapi.WriteError(w, r, g.logger, err)
		return
	}
	defer g.finish(ex)
	releaseSlots, e := g.rateAndSlots(ex, nil)
	ex.rate.writeHeaders(w.Header())
	if e != nil {
		ex.fail(e)
		httpapi.WriteError(w, r, g.logger, httpapi.Errorf(e.status, e.message))
		return
	}
	defer releaseSlots()
	g.extendWriteDeadline(w, model)
	var in imageInputs
	_ = json.Unmarshal(ex.inputs, &in) // written by openImage
	ans, e := g.dialPath(r.Context(), ex, model, imagesPath, func(upstreamModel string) []byte {
		return imageUpstreamBody(upstreamModel, in)
	}, false)
	if e == nil {
		ans.close()
		var status int
		if status, _, e = g.plainAnswer(ex, ans); e == nil && status != http.StatusOK {
			e = &apiError{status: status, message: ex.exception}
		}
	}
	if e != nil {
		ex.fail(e)
		if ex.clientClosedEarly {
			return
		}
		ex.output, _ = json.Marshal(map[string]string{"error": e.message}) // a string: cannot fail
	} else {
		ex.output = imageResponse(ex.output, ex.modelID)
	}
	res := weaveResponse{Response: ex.output}
	if !ex.untraced {
		res.WeaveCallID = &ex.callID
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
}

// openImage reads, authorises and checks a request and finds its model.
func (g *Gateway) openImage(r *http.Request) (*exchange, *catalog.Model, error) {
	body, e := g.readBody(r)
	if e != nil {
		return nil, nil, httpapi.Errorf(e.status, e.message)
	}
	var req imageRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, httpapi.Errorf(http.StatusBadRequest, "body: must be an ImageGenerationCreateReq object such as "+
			`{"project_id": "entity/project", "inputs": {"model": "...", "prompt": "..."}}: `+err.Error())
	}
	p, err := httpapi.Authorize(r.Context(), req.ProjectID, auth.Write)
	if err != nil {
		return nil, nil, err
	}
	if err := g.budgetError(req.ProjectID, p.KeyID); err != nil {
		return nil, nil, err
	}
	in := req.Inputs
	switch {
	case in.Model == "":
		return nil, nil, httpapi.Errorf(http.StatusBadRequest, "inputs.model: field required; name a model that generates images")
	case in.Prompt == "":
		return nil, nil, httpapi.Errorf(http.StatusBadRequest, "inputs.prompt: field required; describe the image to generate")
	case in.N != nil && (*in.N < 1 || *in.N > maxImagesPerRequest):
		return nil, nil, httpapi.Errorf(http.StatusBadRequest, fmt.Sprintf("inputs.n: %d images asked for; ask for 1 to %d", *in.N, maxImagesPerRequest))
	}
	model, err := g.imageModel(in.Model)
	if err != nil {
		return nil, nil, err
	}
	ex := newExchange(opImageGeneration, r.URL.Path, req.ProjectID, p.UserID, g.now())
	ex.principal, ex.modelID = p, in.Model
	ex.untraced = req.TrackLLMCall != nil && !*req.TrackLLMCall
	// The inputs as the reference traces them: every field, n null when unset.
	ex.inputs, _ = json.Marshal(in) // plain values: cannot fail
	return ex, model, nil
}

// imageModel finds a catalog model that generates images: 501 when none
// does, 400 for a model that is unknown or generates none.
func (g *Gateway) imageModel(id string) (*catalog.Model, error) {
	if !slices.ContainsFunc(g.catalog.Listed(), func(m *catalog.Model) bool { return m.Images }) {
		return nil, httpapi.Errorf(http.StatusNotImplemented,
			"image generation is not configured on this server: no inference.models entry sets images: true")
	}
	m, ok := g.catalog.Lookup(id)
	switch {
	case !ok || m.Retired():
		return nil, httpapi.Errorf(http.StatusBadRequest, fmt.Sprintf("inputs.model: unknown model %q; GET /v1/models lists the models this server offers", id))
	case !m.Images:
		return nil, httpapi.Errorf(http.StatusBadRequest, fmt.Sprintf("inputs.model: model %q cannot generate images; name one whose catalog entry sets images: true", id))
	}
	return m, nil
}

// imageUpstreamBody is the OpenAI image request for an upstream model:
// the prompt, n (1 unless asked; DALL·E 3 makes one at a time) and the
// reference's size.
func imageUpstreamBody(upstreamModel string, in imageInputs) []byte {
	n := 1
	if in.N != nil && upstreamModel != "dall-e-3" {
		n = *in.N
	}
	b, _ := json.Marshal(map[string]any{"model": upstreamModel, "prompt": in.Prompt, "n": n, "size": defaultImageSize}) // plain values: cannot fail
	return b
}

// imageResponse is the upstream's answer as the reference returns it:
// model set to the requested model, and usage also under the chat
// names (prompt, completion and total tokens) the UI reads.
func imageResponse(out json.RawMessage, model string) json.RawMessage {
	var res map[string]json.RawMessage
	if decodeJSON(out, &res) != nil {
		return out
	}
	res["model"], _ = json.Marshal(model)
	var usage map[string]any
	if raw, ok := res["usage"]; ok && decodeJSON(raw, &usage) == nil && usage != nil {
		first := func(keys ...string) any {
			for _, k := range keys {
				if v, ok := usage[k].(float64); ok && v != 0 {
					return v
				}
			}
			return 0
		}
		usage["prompt_tokens"] = first("prompt_tokens", "input_tokens")
		usage["completion_tokens"] = first("completion_tokens", "output_tokens", "total_tokens")
		usage["total_tokens"] = first("total_tokens")
		res["usage"], _ = json.Marshal(usage)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return out
	}
	return b
}
