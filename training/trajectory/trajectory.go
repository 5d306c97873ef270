// Package trajectory checks trajectory groups as OpenPipe ART sends them
// (to /log and with RL training jobs) and sums what the per-split
// metrics are computed from. A check failure names the JSON path of the
// bad value, the way FastAPI's 422 answers do, so a client sees exactly
// which trajectory to fix. Unknown members are ignored: newer clients
// send more than older servers know.
//
// It must never import HTTP code or storage backends.
package trajectory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/weftdev/weft/storage"
)

// Error is a value the schema refuses, at Loc (member names and array
// indexes from the body's root).
type Error struct {
	Loc  []any
	Msg  string
	Type string
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Loc))
	for i, p := range e.Loc {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".") + ": " + e.Msg
}

// path is where a check is in the body.
type path []any

func (p path) at(elem any) path { return append(append(path{}, p...), elem) }

func (p path) fail(typ, format string, args ...any) *Error {
	return &Error{Loc: p, Msg: fmt.Sprintf(format, args...), Type: typ}
}

// Check validates raw (the value of trajectory_groups at loc) and returns
// the sums of its trajectories: groups, trajectories, rewards, and each
// numeric or boolean trajectory metric (true counts as 1).
func Check(raw json.RawMessage, loc ...any) (storage.LogStats, error) {
	p := path(loc)
	stats := storage.LogStats{MetricSums: map[string]float64{}, MetricCounts: map[string]int64{}}
	groups, err := array(raw, p, true)
	if err != nil {
		return stats, err
	}
	for i, g := range groups {
		if err := checkGroup(g, p.at(i), &stats); err != nil {
			return stats, err
		}
	}
	stats.Groups = int64(len(groups))
	return stats, nil
}

func checkGroup(raw json.RawMessage, p path, stats *storage.LogStats) error {
	g, err := object(raw, p)
	if err != nil {
		return err
	}
	trajectories, err := array(g["trajectories"], p.at("trajectories"), true)
	if err != nil {
		return err
	}
	for i, t := range trajectories {
		if err := checkTrajectory(t, p.at("trajectories").at(i), stats); err != nil {
			return err
		}
	}
	for _, name := range []string{"metadata", "metrics"} {
		if _, err := optionalObject(g[name], p.at(name)); err != nil {
			return err
		}
	}
	if err := strings_(g["logs"], p.at("logs")); err != nil {
		return err
	}
	return checkExceptions(g["exceptions"], p.at("exceptions"))
}

func checkExceptions(raw json.RawMessage, p path) error {
	items, err := array(raw, p, false)
	if err != nil {
		return err
	}
	for i, item := range items {
		e, err := object(item, p.at(i))
		if err != nil {
			return err
		}
		for _, name := range []string{"type", "message", "traceback"} {
			if _, err := optionalString(e[name], p.at(i).at(name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// null reports an absent member or an explicit null.
func null(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func array(raw json.RawMessage, p path, required bool) ([]json.RawMessage, error) {
	if null(raw) {
		if required {
			return nil, p.fail("missing", "field required; send a list")
		}
		return nil, nil
	}
	var out []json.RawMessage
	if json.Unmarshal(raw, &out) != nil {
		return nil, p.fail("list_type", "must be a list")
	}
	return out, nil
}

func object(raw json.RawMessage, p path) (map[string]json.RawMessage, error) {
	var out map[string]json.RawMessage
	if null(raw) || json.Unmarshal(raw, &out) != nil || out == nil {
		return nil, p.fail("dict_type", "must be an object")
	}
	return out, nil
}

func optionalObject(raw json.RawMessage, p path) (map[string]json.RawMessage, error) {
	if null(raw) {
		return nil, nil
	}
	return object(raw, p)
}

func optionalString(raw json.RawMessage, p path) (string, error) {
	var s string
	if null(raw) {
		return "", nil
	}
	if json.Unmarshal(raw, &s) != nil {
		return "", p.fail("string_type", "must be a string")
	}
	return s, nil
}

// strings_ checks an optional list of strings.
func strings_(raw json.RawMessage, p path) error {
	items, err := array(raw, p, false)
	for i, item := range items {
		if _, err := optionalString(item, p.at(i)); err != nil || null(item) {
			return p.at(i).fail("string_type", "must be a string")
		}
	}
	return err
}

// number reads a finite JSON number.
func number(raw json.RawMessage, p path) (float64, error) {
	var f float64
	if json.Unmarshal(raw, &f) != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, p.fail("float_type", "must be a finite number")
	}
	return f, nil
}

// integer reads an optional whole number.
func integer(raw json.RawMessage, p path) error {
	if null(raw) {
		return nil
	}
	if _, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64); err != nil {
		return p.fail("int_type", "must be a whole number or null")
	}
	return nil
}
