package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// Task is what `weft trainer` hands the user's command for one leased
// job: as JSON on its standard input and in the file $WEFT_TASK_FILE.
type Task struct {
	Job   Job   `json:"job"`
	Model Model `json:"model"`
	// Input is the job's request as created (see Lease.Input).
	Input json.RawMessage `json:"input"`
	// PreviousCheckpoint is the checkpoint to train from (nil: start from
	// the base model); its files are in PreviousCheckpointDir.
	PreviousCheckpoint    *Checkpoint `json:"previous_checkpoint"`
	PreviousCheckpointDir string      `json:"previous_checkpoint_dir"`
	// OutputDir is where the command writes its checkpoint
	// ($WEFT_OUTPUT_DIR too).
	OutputDir string `json:"output_dir"`
}

// Line types a command prints, one JSON object per line on its standard
// output. Other output lines (not starting with '{') are passed to the
// trainer's log.
const (
	// LineStarted and LineGradientStep become the job's events of the
	// same type, with Data as their data.
	LineStarted      = "training_started"
	LineGradientStep = "gradient_step"
	// LineCheckpoint uploads the files under Dir (relative to the output
	// directory, or absolute) and registers them as the checkpoint of
	// Step with Metrics.
	LineCheckpoint = "checkpoint"
	// LineFailed ends the job as failed with ErrorMessage once the
	// command exits.
	LineFailed = "failed"
	// LineLog is a message for the trainer's log.
	LineLog = "log"
)

// Line is one protocol line of a command's output.
type Line struct {
	Type         string             `json:"type"`
	Data         json.RawMessage    `json:"data,omitempty"`
	Step         int64              `json:"step,omitempty"`
	Dir          string             `json:"dir,omitempty"`
	Metrics      map[string]float64 `json:"metrics,omitempty"`
	ErrorMessage string             `json:"error_message,omitempty"`
	Message      string             `json:"message,omitempty"`
}

// ParseLine reads one output line. ok is false for a line that is not a
// protocol line (plain output); a line that starts like one but breaks
// the protocol is an error naming what is wrong.
func ParseLine(raw []byte) (l Line, ok bool, err error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return Line{}, false, nil
	}
	if err := json.Unmarshal(t, &l); err != nil {
		return Line{}, true, fmt.Errorf("not a JSON object of the trainer protocol: %w", err)
	}
	return l, true, l.check()
}

func (l Line) check() error {
	switch l.Type {
	case LineStarted:
		var d struct {
			NumSequences *int64 `json:"num_sequences"`
		}
		if json.Unmarshal(l.Data, &d) != nil || d.NumSequences == nil || *d.NumSequences < 0 {
			return fmt.Errorf(`training_started: data must be {"num_sequences": N}, N the gradient steps to come`)
		}
	case LineGradientStep:
		var d map[string]float64
		if json.Unmarshal(l.Data, &d) != nil || d == nil {
			return fmt.Errorf("gradient_step: data must be an object of numbers")
		}
		for k, v := range d {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return fmt.Errorf("gradient_step: data.%s must be finite", k)
			}
		}
	case LineCheckpoint:
		if l.Step < 1 || l.Dir == "" {
			return fmt.Errorf(`checkpoint: give "step" (at least 1) and "dir" (the checkpoint's directory)`)
		}
	case LineFailed, LineLog:
	default:
		return fmt.Errorf("type %q is not one of training_started, gradient_step, checkpoint, failed, log", l.Type)
	}
	return nil
}
