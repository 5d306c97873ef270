package chdb

import (
	"regexp"
	"strconv"
	"strings"
)

// Error is an exception raised by the engine. Message is the engine's full
// text ("Code: 60. DB::Exception: ... (UNKNOWN_TABLE) ..."), which is what a
// ClickHouse server sends to its clients.
type Error struct {
	Code    int    // ClickHouse error code, 0 when the text carried none
	Name    string // symbolic code name such as UNKNOWN_TABLE, when present
	Message string
}

func (e *Error) Error() string { return e.Message }

var (
	errorCode = regexp.MustCompile(`^Code:\s*(\d+)\.`)
	errorName = regexp.MustCompile(`\(([A-Z][A-Z0-9_]+)\)`)
)

// parseError turns the engine's exception text into an Error. The code name
// is the last parenthesised upper-case word: the engine appends it after the
// message, which may quote user text containing similar words.
func parseError(text string) *Error {
	text = strings.TrimSpace(text)
	e := &Error{Message: text}
	if m := errorCode.FindStringSubmatch(text); m != nil {
		e.Code, _ = strconv.Atoi(m[1])
	}
	if ms := errorName.FindAllStringSubmatch(text, -1); ms != nil {
		e.Name = ms[len(ms)-1][1]
	}
	return e
}
