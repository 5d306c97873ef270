package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/storage/querylang"
	"github.com/weftdev/weft/wire"
)

// RetryAfterSeconds is what overloaded and unavailable answers suggest.
const RetryAfterSeconds = 1

// StatusError carries an explicit status for errors no kind covers.
type StatusError struct {
	Status int
	Msg    string
	// Extra fields merged into the JSON body (e.g. error_code, deleted_at).
	Extra map[string]any
}

func (e *StatusError) Error() string { return e.Msg }

// Errorf is a shorthand for a StatusError.
func Errorf(status int, msg string) error { return &StatusError{Status: status, Msg: msg} }

// Status maps an error to its HTTP status code.
func Status(err error) int {
	var se *StatusError
	var le *LimitError
	var fe *wire.FieldError
	switch {
	case errors.As(err, &se):
		return se.Status
	case errors.As(err, &le):
		return le.Status
	case errors.As(err, &fe):
		if fe.Unknown || fe.Schema != "" {
			return http.StatusUnprocessableEntity
		}
		return http.StatusBadRequest
	case errors.As(err, new(*querylang.Error)):
		// A query document the reference's schema refuses.
		return http.StatusUnprocessableEntity
	case errors.Is(err, auth.ErrUnauthenticated):
		return http.StatusUnauthorized
	case errors.Is(err, auth.ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, auth.ErrBadProjectID), consumer.Classify(err) == consumer.KindInvalid:
		return http.StatusBadRequest
	case errors.Is(err, storage.ErrFieldNotAllowed):
		return http.StatusUnprocessableEntity
	case errors.Is(err, storage.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, storage.ErrConflict):
		return http.StatusConflict
	}
	// The kinds a write or a read can fail with, one table for HTTP,
	// gRPC and every retry decision (consumer.Classify).
	switch consumer.Classify(err) {
	case consumer.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case consumer.KindOverloaded:
		return http.StatusTooManyRequests
	case consumer.KindUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// WriteError answers err in the Weave error shape. Server errors are
// logged and their details withheld from the client.
func WriteError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	status := Status(err)
	body := map[string]any{"reason": err.Error()}
	var se *StatusError
	if errors.As(err, &se) {
		for k, v := range se.Extra {
			body[k] = v
		}
	}
	var le *LimitError
	if errors.As(err, &le) {
		body["limit"], body["setting"] = le.Limit, le.Setting
	}
	var fe *wire.FieldError
	if status == http.StatusUnprocessableEntity && errors.As(err, &fe) {
		typ := fe.Schema
		if typ == "" {
			typ = "value_error"
		}
		body["detail"] = []map[string]any{{"loc": []string{"body", fe.Field}, "msg": fe.Msg, "type": typ}}
	}
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
	case status >= 500:
		logger.Error("a request failed with a server error; the client got the 5xx status; if it repeats, check the store, otherwise report it as a bug with this line", "method", r.Method, "path", r.URL.Path, "err", err)
		body = map[string]any{"reason": "Internal server error"}
	}
	WriteJSON(w, status, body)
}

// WriteJSON answers v as JSON with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
