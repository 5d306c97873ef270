package wire

import "fmt"

// CheckPaging refuses a negative limit or offset of a query request; nil
// means the field was absent.
func CheckPaging(limit, offset *int64) error {
	for _, f := range []struct {
		name string
		v    *int64
	}{{"limit", limit}, {"offset", offset}} {
		if f.v != nil && *f.v < 0 {
			return &FieldError{Field: f.name, Msg: fmt.Sprintf("must be 0 or more, got %d", *f.v)}
		}
	}
	return nil
}
