package storage

import "errors"

// Error kinds shared by every backend and the query compiler. Callers wrap
// them with fmt.Errorf("...: %w", ...) and a message that names the field
// and the fix; the HTTP layer maps each kind to one status code.
var (
	// ErrInvalidArgument: the request can never succeed as sent (HTTP 400).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrFieldNotAllowed: a query or sort names a field that does not exist
	// or cannot be used there (HTTP 422).
	ErrFieldNotAllowed = errors.New("field not allowed")
	// ErrNotFound: the addressed object does not exist in this project (404).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the write contradicts stored state, e.g. a digest
	// mismatch (409).
	ErrConflict = errors.New("conflict")
	// ErrTooLarge: the request exceeds a documented limit (413).
	ErrTooLarge = errors.New("too large")
	// ErrUnavailable: the backend cannot take work now; retry later (503).
	ErrUnavailable = errors.New("storage unavailable")
)
