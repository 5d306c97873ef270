package upstreamtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// stream answers with server-sent events in OpenAI's format.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	id := fmt.Sprintf("chatcmpl-%d", nextID.Add(1))
	send := func(choices []any, extra map[string]any) {
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.model, "choices": choices}
		if req.includeUsage {
			chunk["usage"] = nil
		}
		for k, v := range extra {
			chunk[k] = v
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	deltas, finish := req.deltas()
	if s.misbehave(w, r, req, send, deltas) {
		return
	}
	for _, d := range deltas {
		send([]any{choice(d, nil)}, nil)
	}
	send([]any{choice(map[string]any{}, &finish)}, nil)
	if req.includeUsage {
		send([]any{}, map[string]any{"usage": req.usage()})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// misbehave plays the models that do not stream normally; false for the
// others.
func (s *Server) misbehave(w http.ResponseWriter, r *http.Request, req *request, send func([]any, map[string]any), deltas []map[string]any) bool {
	switch req.model {
	case "silent":
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		<-r.Context().Done()
		s.canceled.Add(1)
	case "hold":
		s.hold(r, req, send, deltas[0])
	case "midstream-error", "cut":
		send([]any{choice(deltas[0], nil)}, nil)
		send([]any{choice(deltas[1], nil)}, nil)
		if req.model == "midstream-error" {
			fmt.Fprint(w, "data: {\"error\":{\"message\":\"upstream exploded\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n")
		}
	default:
		return false
	}
	return true
}

// hold sends the first delta, then a keep-alive chunk every interval
// until the client goes away.
func (s *Server) hold(r *http.Request, req *request, send func([]any, map[string]any), first map[string]any) {
	send([]any{choice(first, nil)}, nil)
	tick := time.NewTicker(s.opts.HoldInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			s.canceled.Add(1)
			return
		case <-tick.C:
			send([]any{choice(map[string]any{"content": "."}, nil)}, nil)
		}
	}
}

func choice(delta map[string]any, finish *string) map[string]any {
	return map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}
}

// deltas splits the answer into chunk deltas: the role, then words (or
// reasoning, or tool call fragments); finish is the finish reason.
func (r *request) deltas() ([]map[string]any, string) {
	out := []map[string]any{{"role": "assistant", "content": ""}}
	if reasoning := r.reasoning(); reasoning != nil {
		out = append(out, map[string]any{"reasoning": *reasoning})
	}
	if r.tool != "" {
		args := r.arguments()
		third := len(args) / 3
		out[0] = map[string]any{"role": "assistant", "tool_calls": []any{toolDelta(map[string]any{"id": "call_1", "type": "function",
			"function": map[string]any{"name": r.tool, "arguments": ""}})}}
		for _, part := range []string{args[:third], args[third : 2*third], args[2*third:]} {
			out = append(out, map[string]any{"tool_calls": []any{toolDelta(map[string]any{"function": map[string]any{"arguments": part}})}})
		}
		return out, "tool_calls"
	}
	words := strings.SplitAfter(r.reply(), " ")
	for _, w := range words {
		out = append(out, map[string]any{"content": w})
	}
	return out, "stop"
}

func toolDelta(fields map[string]any) map[string]any {
	fields["index"] = 0
	return fields
}
