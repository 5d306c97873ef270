package otelmap

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Name limits of the Weave wire protocol, in characters.
const (
	MaxOpNameLen      = 128
	MaxDisplayNameLen = 1024
	// unnamedOp is the op of spans sent without a name.
	unnamedOp = "unnamed_span"
)

// nameDelimiters are the places where a long name is preferably cut.
const nameDelimiters = ",;| /?."

// OpName is the op_name of a call made from a span named spanName: the span
// name itself, as a plain string. Names longer than MaxOpNameLen are cut at
// a delimiter and get ":" plus the first four hex digits of the SHA-256 of
// the full name, so that long names stay distinct (Weave does the same).
//
// Weave's server also creates a placeholder op object per span name and
// stores its ref; Weft does not, because that would put a synchronous
// object write on the span hot path. A plain op_name is valid on the wire,
// filters by op name match it, and the read path derives trace_name from it.
func OpName(spanName string) string {
	name := strings.ToValidUTF8(spanName, "\uFFFD")
	if strings.TrimSpace(name) == "" {
		return unnamedOp
	}
	if utf8.RuneCountInString(name) <= MaxOpNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(spanName))
	return shorten(name, MaxOpNameLen, ":"+hex.EncodeToString(sum[:2]), false)
}

// DisplayName limits a display name to MaxDisplayNameLen characters,
// ending a cut name with "...".
func DisplayName(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	if utf8.RuneCountInString(name) <= MaxDisplayNameLen {
		return name
	}
	return shorten(name, MaxDisplayNameLen, "...", true)
}

// shorten cuts name so that it plus suffix fits max characters, at the last
// delimiter when there is one (keeping it when keepDelim), else mid-word.
func shorten(name string, max int, suffix string, keepDelim bool) string {
	room := max - utf8.RuneCountInString(suffix)
	cut := 0
	for i := range name {
		if room == 0 {
			cut = i
			break
		}
		room--
	}
	prefix := name[:cut]
	if d := strings.LastIndexAny(prefix, nameDelimiters); d > 0 {
		if keepDelim {
			d++
		}
		prefix = prefix[:d]
	}
	return prefix + suffix
}
