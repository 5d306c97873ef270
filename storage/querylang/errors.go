package querylang

import "github.com/weftdev/weft/storage/errkind"

// Error is a syntax error at a location of the query document, such as
// "query.$expr.$and[1].$eq". It wraps storage.ErrInvalidArgument.
type Error struct {
	Loc string
	Msg string
}

func (e *Error) Error() string { return e.Loc + ": " + e.Msg }

// Unwrap lets errors.Is(err, storage.ErrInvalidArgument) hold.
func (e *Error) Unwrap() error { return errkind.InvalidArgument }

func errAt(loc, msg string) error { return &Error{Loc: loc, Msg: msg} }
