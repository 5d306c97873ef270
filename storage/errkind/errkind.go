// Package errkind declares the error kinds of the storage contract. Package
// storage re-exports each of them (storage.ErrInvalidArgument is
// errkind.InvalidArgument), and callers use those names; this package
// exists only so that storage/querylang, whose parsed query storage
// carries, can wrap a kind without importing storage.
//
// It must never import anything of the project.
package errkind

import "errors"

// The kinds; see package storage for what each means to a caller.
var (
	InvalidArgument = errors.New("invalid argument")
	FieldNotAllowed = errors.New("field not allowed")
	NotFound        = errors.New("not found")
	Conflict        = errors.New("conflict")
	TooLarge        = errors.New("too large")
	Unavailable     = errors.New("storage unavailable")
)
