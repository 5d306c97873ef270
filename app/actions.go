package app

import "github.com/weftdev/weft/traceapi"

// llm is the inference gateway as the LLM-judge actions' completer; nil
// in a process without one, where those actions are refused.
func (s *Server) llm() traceapi.Completer {
	if s.gateway == nil {
		return nil
	}
	return s.gateway
}
