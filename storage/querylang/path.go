package querylang

import (
	"strconv"
	"strings"
)

// Segment is one step of a $getField path.
type Segment struct {
	// Key is the segment text with `\.` escapes resolved.
	Key string
	// IsIndex marks a canonical non-negative integer segment ("0", "12"),
	// which indexes arrays; Index holds its value.
	IsIndex bool
	Index   int
}

// SplitPath splits a dotted field path on unescaped dots. `\.` stands for a
// literal dot inside a key ("output.a\.b" is ["output", "a.b"]); any other
// backslash is kept as is. Empty segments are kept, so "a..b" has three.
func SplitPath(path string) []Segment {
	var segs []Segment
	var cur strings.Builder
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '\\' && i+1 < len(path) && path[i+1] == '.':
			cur.WriteByte('.')
			i++
		case path[i] == '.':
			segs = append(segs, newSegment(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(path[i])
		}
	}
	return append(segs, newSegment(cur.String()))
}

func newSegment(key string) Segment {
	s := Segment{Key: key}
	if isCanonicalIndex(key) {
		s.Index, _ = strconv.Atoi(key)
		s.IsIndex = true
	}
	return s
}

// isCanonicalIndex accepts "0" and digit strings without a leading zero,
// short enough to fit an int.
func isCanonicalIndex(key string) bool {
	if key == "" || len(key) > 9 || (len(key) > 1 && key[0] == '0') {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < '0' || key[i] > '9' {
			return false
		}
	}
	return true
}

// JoinPath is the inverse of SplitPath: it escapes dots inside keys.
func JoinPath(segs []Segment) string {
	parts := make([]string, len(segs))
	for i, s := range segs {
		parts[i] = strings.ReplaceAll(s.Key, ".", `\.`)
	}
	return strings.Join(parts, ".")
}
