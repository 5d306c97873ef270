package kafkaqueue

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weftdev/weft/training/jobs"
)

// recordVersion is the format of a command record's value.
const recordVersion = 1

type record struct {
	V   int           `json:"v"`
	Cmd *jobs.Command `json:"cmd"`
}

// Encode is a command's record value: versioned JSON.
func Encode(cmd jobs.Command) ([]byte, error) {
	b, err := json.Marshal(record{V: recordVersion, Cmd: &cmd})
	if err != nil {
		return nil, fmt.Errorf("encode training command: %w", err)
	}
	return b, nil
}

// Decode reads a record value. A value that is no command of a known
// format is an error; every replica skips the same such records, so
// they change nobody's state.
func Decode(value []byte) (jobs.Command, error) {
	var r record
	if err := json.Unmarshal(value, &r); err != nil {
		return jobs.Command{}, fmt.Errorf("training command record: %w", err)
	}
	switch {
	case r.V != recordVersion:
		return jobs.Command{}, fmt.Errorf("training command record: format %d is not %d (a newer weft wrote it)", r.V, recordVersion)
	case r.Cmd == nil || r.Cmd.ID == "" || r.Cmd.Kind == "":
		return jobs.Command{}, errors.New("training command record: no command with an id and a kind")
	}
	return *r.Cmd, nil
}
