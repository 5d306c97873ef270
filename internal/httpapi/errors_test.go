package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/wire"
)

func TestStatusAndBody(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		status     int
		retryAfter bool
		reason     string
	}{
		{"field error", &wire.FieldError{Field: "x", Msg: "bad"}, 400, false, "x: bad"},
		{"unknown field", &wire.FieldError{Field: "x", Msg: "unknown", Unknown: true}, 422, false, "x: unknown"},
		{"unauthenticated", fmt.Errorf("w: %w", auth.ErrUnauthenticated), 401, false, "w: missing or invalid API key"},
		{"forbidden", auth.ErrForbidden, 403, false, "forbidden"},
		{"invalid argument", fmt.Errorf("q: %w", storage.ErrInvalidArgument), 400, false, "q: invalid argument"},
		{"field not allowed", storage.ErrFieldNotAllowed, 422, false, "field not allowed"},
		{"not found", storage.ErrNotFound, 404, false, "not found"},
		{"conflict", storage.ErrConflict, 409, false, "conflict"},
		{"too large", storage.ErrTooLarge, 413, false, "too large"},
		{"overloaded", fmt.Errorf("writing: %w", consumer.ErrOverloaded), 429, true, "writing: ingest queue is full"},
		{"stopping", consumer.ErrStopped, 503, true, "ingest pipeline is stopping"},
		{"unavailable", storage.ErrUnavailable, 503, true, "storage unavailable"},
		{"explicit", Errorf(418, "teapot"), 418, false, "teapot"},
		{"internal hides detail", errors.New("secret dsn password=x"), 500, false, "Internal server error"},
		{"canceled", context.Canceled, 503, true, "context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			WriteError(rec, httptest.NewRequest(http.MethodPost, "/x", nil), slog.New(slog.DiscardHandler), tc.err)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if got := rec.Header().Get("Retry-After") != ""; got != tc.retryAfter {
				t.Fatalf("Retry-After present = %v, want %v", got, tc.retryAfter)
			}
			var body map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body["reason"] != tc.reason {
				t.Fatalf("reason %q, want %q", body["reason"], tc.reason)
			}
		})
	}
}
