package inference

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// apiError is an error answer in the OpenAI body shape
// ({"error":{"message","type","param","code"}}), with the status and the
// retry advice the openai clients read: Retry-After (and -Ms) and
// x-should-retry.
type apiError struct {
	status  int
	message string
	typ     string
	param   string // "" renders as null
	code    string // "" renders as null
	// retryAfter > 0 marks the answer retryable.
	retryAfter time.Duration
}

func (e *apiError) Error() string { return e.message }

type errorBody struct {
	Error errorFields `json:"error"`
}

type errorFields struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) body() []byte {
	f := errorFields{Message: e.message, Type: e.typ}
	if e.param != "" {
		f.Param = &e.param
	}
	if e.code != "" {
		f.Code = &e.code
	}
	b, _ := json.Marshal(errorBody{Error: f}) // strings only: cannot fail
	return b
}

// write answers e; headers set before (a call id) are kept.
func (e *apiError) write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	switch {
	case e.retryAfter > 0:
		h.Set("Retry-After", strconv.Itoa(int((e.retryAfter+time.Second-1)/time.Second)))
		h.Set("Retry-After-Ms", strconv.FormatInt(e.retryAfter.Milliseconds(), 10))
		h.Set("X-Should-Retry", "true")
	case e.status < 500:
		h.Set("X-Should-Retry", "false")
	}
	w.WriteHeader(e.status)
	_, _ = w.Write(e.body())
}

func invalidRequest(param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", param: param, message: fmt.Sprintf(format, args...)}
}

func authFailed(format string, args ...any) *apiError {
	return &apiError{status: http.StatusUnauthorized, typ: "invalid_request_error", code: "invalid_api_key",
		message: "Authentication failed: " + fmt.Sprintf(format, args...)}
}

func modelNotFound(id string) *apiError {
	return &apiError{status: http.StatusNotFound, typ: "invalid_request_error", param: "model", code: "model_not_found",
		message: fmt.Sprintf("The model %q does not exist; GET /v1/models lists the models this server offers", id)}
}

func modelRetired(id string) *apiError {
	return &apiError{status: http.StatusNotFound, typ: "invalid_request_error", param: "model", code: "model_not_found",
		message: fmt.Sprintf("The model %q has been retired; GET /v1/models lists the models this server offers", id)}
}

func concurrencyLimited(project string, limit int, retryAfter time.Duration) *apiError {
	return &apiError{status: http.StatusTooManyRequests, typ: "requests", code: "rate_limit_exceeded", retryAfter: retryAfter,
		message: fmt.Sprintf("Concurrency limit reached for requests: project %s has %d requests in flight (inference.max_concurrent_per_project, or its entry in inference.project_concurrency)", project, limit)}
}

func keyConcurrencyLimited(limit int, retryAfter time.Duration) *apiError {
	return &apiError{status: http.StatusTooManyRequests, typ: "requests", code: "rate_limit_exceeded", retryAfter: retryAfter,
		message: fmt.Sprintf("Concurrency limit reached for requests: this API key has %d requests in flight over all its projects (inference.max_concurrent_per_key)", limit)}
}

func badGateway(retryAfter time.Duration, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadGateway, typ: "server_error", code: "upstream_error", retryAfter: retryAfter,
		message: fmt.Sprintf(format, args...)}
}

func unavailable(retryAfter time.Duration, format string, args ...any) *apiError {
	return &apiError{status: http.StatusServiceUnavailable, typ: "server_error", code: "engine_overloaded", retryAfter: retryAfter,
		message: fmt.Sprintf(format, args...)}
}

func internalError(retryAfter time.Duration) *apiError {
	return &apiError{status: http.StatusInternalServerError, typ: "server_error", retryAfter: retryAfter,
		message: "The server had an error while processing your request"}
}
