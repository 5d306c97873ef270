package inference

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/wire"
)

// chatRequest is a client's chat completion request: its members as sent,
// and the few the gateway reads. Members it does not know (tools,
// response_format, vLLM extras, ...) go upstream unchanged.
type chatRequest struct {
	fields    map[string]json.RawMessage
	model     string
	stream    bool
	wantUsage bool // the client asked for the stream's usage chunk itself
}

// parseChatRequest validates a request object. The error names the field.
func parseChatRequest(fields map[string]json.RawMessage) (*chatRequest, *apiError) {
	req := &chatRequest{fields: fields}
	raw, ok := fields["model"]
	if !ok || isNull(raw) {
		return nil, invalidRequest("model", "model: field required; name one of the models GET /v1/models lists")
	}
	if decodeJSON(raw, &req.model) != nil || req.model == "" {
		return nil, invalidRequest("model", "model: must be a non-empty string")
	}
	if e := checkMessages(fields["messages"]); e != nil {
		return nil, e
	}
	if raw, ok := fields["stream"]; ok && !isNull(raw) && decodeJSON(raw, &req.stream) != nil {
		return nil, invalidRequest("stream", "stream: must be true or false")
	}
	if raw, ok := fields["stream_options"]; ok && !isNull(raw) {
		var opts struct {
			IncludeUsage *bool `json:"include_usage"`
		}
		if decodeJSON(raw, &opts) != nil {
			return nil, invalidRequest("stream_options", "stream_options: must be an object such as {\"include_usage\": true}")
		}
		req.wantUsage = opts.IncludeUsage != nil && *opts.IncludeUsage
	}
	return req, nil
}

func checkMessages(raw json.RawMessage) *apiError {
	if raw == nil || isNull(raw) {
		return invalidRequest("messages", "messages: field required; send the conversation as [{\"role\": \"user\", \"content\": \"...\"}]")
	}
	var msgs []struct {
		Role *string `json:"role"`
	}
	if decodeJSON(raw, &msgs) != nil || len(msgs) == 0 {
		return invalidRequest("messages", "messages: must be a non-empty array of message objects")
	}
	for i, m := range msgs {
		if m.Role == nil || *m.Role == "" {
			return invalidRequest("messages", "messages[%d].role: field required (system, user, assistant or tool)", i)
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// decodeObject reads a JSON object's members without decoding them.
func decodeObject(body []byte) (map[string]json.RawMessage, *apiError) {
	var fields map[string]json.RawMessage
	if err := decodeJSON(body, &fields); err != nil || fields == nil {
		return nil, invalidRequest("", "the body is not a JSON object; send the chat request as JSON")
	}
	return fields, nil
}

// upstreamBody is the request as sent upstream: the upstream's model name,
// and for streams stream_options.include_usage set, so usage is always
// captured. Members are written in sorted order; values unchanged.
func (req *chatRequest) upstreamBody(model string) []byte {
	keys := make([]string, 0, len(req.fields)+1)
	size := len(model) + 64
	for k, v := range req.fields {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	if req.stream && req.fields["stream_options"] == nil {
		keys = append(keys, "stream_options")
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.Grow(size)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, k)
		b.WriteByte(':')
		b.Write(req.upstreamValue(k, model))
	}
	b.WriteByte('}')
	return b.Bytes()
}

func (req *chatRequest) upstreamValue(key, model string) []byte {
	switch {
	case key == "model":
		return appendJSONString(nil, model)
	case key == "stream_options" && req.stream:
		var opts map[string]json.RawMessage
		_ = json.Unmarshal(req.fields[key], &opts) // validated, or absent or null
		if opts == nil {
			opts = map[string]json.RawMessage{}
		}
		opts["include_usage"] = json.RawMessage("true")
		v, _ := json.Marshal(opts)
		return v
	}
	return req.fields[key]
}

// readBody reads a bounded request body; r's body is held in the
// listener's budget (see holdBody), so a read past the budget or the
// key's share, or a body arriving too slowly, stops here.
func (g *Gateway) readBody(r *http.Request) ([]byte, *apiError) {
	body, err := httpapi.ReadJSON(r, g.cfg.MaxRequestBytes)
	var le *httpapi.LimitError
	var se *httpapi.StatusError
	var fe *wire.FieldError
	switch {
	case err == nil:
		return body, nil
	case errors.As(err, &le) && le.Status == http.StatusTooManyRequests:
		return nil, &apiError{status: le.Status, typ: "requests", code: "rate_limit_exceeded", retryAfter: g.cfg.RetryAfter, message: le.Msg}
	case errors.As(err, &le):
		return nil, &apiError{status: le.Status, typ: "invalid_request_error", code: "request_timeout", message: le.Msg}
	case errors.As(err, &se) && se.Status == http.StatusRequestEntityTooLarge:
		return nil, &apiError{status: se.Status, typ: "invalid_request_error",
			message: "the request body is larger than inference.max_request_bytes; send a shorter conversation"}
	case errors.As(err, &fe):
		return nil, invalidRequest(fe.Field, "%s", fe.Error())
	}
	return nil, invalidRequest("", "reading the request body: %v", err)
}

// holdBody counts r's body in the listener's budget from its first read
// until release, which the handler calls once the upstream answered and
// the call was handed to the recorder: the body is kept for both.
func (g *Gateway) holdBody(w http.ResponseWriter, r *http.Request) (*http.Request, func()) {
	return g.inflight.Hold(w, r)
}

// writeJSONString writes s as a JSON string.
func writeJSONString(b *bytes.Buffer, s string) {
	b.Write(appendJSONString(b.AvailableBuffer(), s))
}

// appendJSONString appends s as a JSON string, as json.Marshal writes it;
// member names and model ids are almost always plain ASCII, which needs
// no escaping and no encoder.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(s) // a string: cannot fail
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
