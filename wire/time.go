package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Time is a datetime as clients send it: an ISO-8601 string with Z, an
// offset or no zone (taken as UTC). Numbers are refused: every SDK sends
// strings, and a number there is a mistake (started_at: 1 would be stored
// as 1970) whose unit (seconds or milliseconds) cannot be told. It encodes
// as ISO-8601 UTC with microsecond precision, as the reference server
// answers.
type Time struct{ time.Time }

var layouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// ParseTime parses the ISO-8601 forms and, as query literals compared
// with datetimes may be, unix seconds.
func ParseTime(s string) (time.Time, error) {
	if t, ok := parseISO(s); ok {
		return t, nil
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		return unixFloat(f)
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO-8601 datetime (e.g. 2025-01-02T03:04:05.123Z)", s)
}

func parseISO(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

func unixFloat(f float64) (time.Time, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e11 {
		return time.Time{}, fmt.Errorf("%v is out of range for unix seconds", f)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000).UTC(), nil
}

// UnmarshalJSON implements json.Unmarshaler. Failures are reported as
// *json.UnmarshalTypeError so encoding/json adds the field path to them.
func (t *Time) UnmarshalJSON(b []byte) error {
	if err := t.unmarshal(b); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[Time]()}
	}
	return nil
}

func (t *Time) unmarshal(b []byte) error {
	t.Time = time.Time{}
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	s, err := timeText(b)
	if err != nil {
		return err
	}
	v, ok := parseISO(s)
	if !ok {
		return fmt.Errorf("%q is not an ISO-8601 datetime", s)
	}
	t.Time = v
	return nil
}

// timeText is the text of a JSON string; a datetime rarely needs
// unescaping, so only an escaped one goes through encoding/json.
func timeText(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b[1:len(b)-1], '\\') < 0 && bytes.IndexByte(b[1:len(b)-1], '"') < 0 {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + FormatTime(t.Time) + `"`), nil
}

// FormatTime renders t the way pydantic does: UTC, "Z", microseconds only
// when non-zero.
func FormatTime(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000Z")
}

// TimePtr returns nil for the zero time.
func TimePtr(t Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	v := t.UTC()
	return &v
}
