package storage

import "github.com/weftdev/weft/storage/errkind"

// Error kinds shared by every backend and the query compiler. Callers wrap
// them with fmt.Errorf("...: %w", ...) and a message that names the field
// and the fix; the HTTP layer maps each kind to one status code.
var (
	// ErrInvalidArgument: the request can never succeed as sent (HTTP 400).
	ErrInvalidArgument = errkind.InvalidArgument
	// ErrFieldNotAllowed: a query or sort names a field that does not exist
	// or cannot be used there (HTTP 422).
	ErrFieldNotAllowed = errkind.FieldNotAllowed
	// ErrNotFound: the addressed object does not exist in this project (404).
	ErrNotFound = errkind.NotFound
	// ErrConflict: the write contradicts stored state, e.g. a digest
	// mismatch (409).
	ErrConflict = errkind.Conflict
	// ErrTooLarge: the request exceeds a documented limit (413).
	ErrTooLarge = errkind.TooLarge
	// ErrUnavailable: the backend cannot take work now; retry later (503).
	ErrUnavailable = errkind.Unavailable
)
