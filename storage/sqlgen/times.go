package sqlgen

import (
	"math"
	"strings"
	"time"
)

// unix seconds of 0001-01-01 and 9999-12-31T23:59:59, the range of
// datetimes the wire accepts.
const (
	minUnixSeconds = -62135596800
	maxUnixSeconds = 253402300799
)

// isoLayouts are the ISO-8601 forms accepted for datetime literals; a form
// without an offset is UTC.
var isoLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}

// timeLiteral converts a literal compared with a datetime column: numbers
// are unix seconds, strings ISO-8601. Anything else does not convert.
func timeLiteral(v any) (time.Time, bool) {
	switch x := v.(type) {
	case int64:
		return unixTime(float64(x))
	case float64:
		return unixTime(x)
	case string:
		return parseISO(x)
	}
	return time.Time{}, false
}

func unixTime(sec float64) (time.Time, bool) {
	if math.IsNaN(sec) || sec < minUnixSeconds || sec > maxUnixSeconds {
		return time.Time{}, false
	}
	whole := math.Floor(sec)
	nanos := math.Round((sec - whole) * 1e9)
	return time.Unix(int64(whole), int64(nanos)).UTC(), true
}

func parseISO(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "z") {
		s = s[:len(s)-1] + "Z"
	}
	for _, layout := range isoLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
