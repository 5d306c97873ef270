// Command weft-example-trainer shows the contract between `weft trainer`
// and a real trainer. It is an example, not a trainer: it trains nothing.
// It reads the job (protocol.Task) from standard input or
// $WEFT_TASK_FILE, announces its gradient steps, prints one gradient_step
// line per trajectory group (with the group's mean reward and a made-up
// loss), writes a checkpoint directory under $WEFT_OUTPUT_DIR (an
// adapter_config.json and an adapter_model.bin whose bytes hash the input
// and the previous checkpoint, so tests can tell checkpoints apart), and
// prints the checkpoint line:
//
//	weft trainer --url URL --key KEY --command "weft-example-trainer"
//
// Flags make it slow or make it fail, for trying cancellation, lost
// workers and failures.
package main

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/weftdev/weft/training/protocol"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "weft-example-trainer:", err)
		os.Exit(1)
	}
}

type options struct {
	stepDelay time.Duration
	failAt    int
	minSteps  int
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("weft-example-trainer", flag.ContinueOnError)
	var o options
	fs.DurationVar(&o.stepDelay, "step-delay", 10*time.Millisecond, "time each gradient step takes")
	fs.IntVar(&o.failAt, "fail-at", 0, "report a failure and exit 1 at this gradient step (0: never)")
	fs.IntVar(&o.minSteps, "min-steps", 1, "at least this many gradient steps")
	if err := fs.Parse(args); err != nil {
		return err
	}
	task, err := readTask(stdin)
	if err != nil {
		return err
	}
	rewards := groupRewards(task.Input)
	for len(rewards) < o.minSteps {
		rewards = append(rewards, 0)
	}
	out := json.NewEncoder(stdout)
	_ = out.Encode(protocol.Line{Type: protocol.LineStarted, Data: mustJSON(map[string]int{"num_sequences": len(rewards)})})
	fmt.Fprintf(stdout, "training %s from %s on %d groups\n", task.Model.Name, task.Model.BaseModel, len(rewards))
	loss := 1.0
	for i, r := range rewards {
		time.Sleep(o.stepDelay)
		if o.failAt == i+1 {
			_ = out.Encode(protocol.Line{Type: protocol.LineFailed, ErrorMessage: fmt.Sprintf("failed at gradient step %d, as asked (--fail-at)", i+1)})
			return fmt.Errorf("failing at step %d", i+1)
		}
		loss *= 0.8
		_ = out.Encode(protocol.Line{Type: protocol.LineGradientStep, Data: mustJSON(map[string]float64{
			"loss": loss, "reward": r, "learning_rate": 1e-5, "num_trajectories": 1})})
	}
	dir := fmt.Sprintf("step%d", task.Job.TargetStep)
	if err := writeCheckpoint(filepath.Join(task.OutputDir, dir), task); err != nil {
		return err
	}
	return out.Encode(protocol.Line{Type: protocol.LineCheckpoint, Step: task.Job.TargetStep, Dir: dir,
		Metrics: map[string]float64{"train/loss": loss}})
}

// readTask reads the job from $WEFT_TASK_FILE, or standard input.
func readTask(stdin io.Reader) (protocol.Task, error) {
	var raw []byte
	var err error
	if path := os.Getenv("WEFT_TASK_FILE"); path != "" {
		raw, err = os.ReadFile(path)
	} else {
		raw, err = io.ReadAll(stdin)
	}
	var task protocol.Task
	if err == nil {
		err = json.Unmarshal(raw, &task)
	}
	if err != nil {
		return task, fmt.Errorf("reading the task: %w", err)
	}
	return task, nil
}

// groupRewards is each trajectory group's mean reward (RL jobs); SFT
// jobs get none.
func groupRewards(input json.RawMessage) []float64 {
	var in struct {
		TrajectoryGroups []struct {
			Trajectories []struct {
				Reward float64 `json:"reward"`
			} `json:"trajectories"`
		} `json:"trajectory_groups"`
	}
	_ = json.Unmarshal(input, &in)
	var out []float64
	for _, g := range in.TrajectoryGroups {
		sum := 0.0
		for _, t := range g.Trajectories {
			sum += t.Reward
		}
		out = append(out, sum/float64(max(len(g.Trajectories), 1)))
	}
	return out
}

// writeCheckpoint writes a LoRA-shaped directory: the adapter's config
// and a stand-in for its weights.
func writeCheckpoint(dir string, task protocol.Task) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg := mustJSON(map[string]any{"peft_type": "LORA", "base_model_name_or_path": task.Model.BaseModel, "r": 8,
		"lora_alpha": 16, "target_modules": []string{"q_proj", "v_proj"}})
	if err := os.WriteFile(filepath.Join(dir, "adapter_config.json"), cfg, 0o644); err != nil {
		return err
	}
	h := sha256.New()
	h.Write(task.Input)
	if task.PreviousCheckpointDir != "" {
		prev, err := os.ReadFile(filepath.Join(task.PreviousCheckpointDir, "adapter_model.bin"))
		if err != nil {
			return fmt.Errorf("the previous checkpoint: %w", err)
		}
		h.Write(prev)
	}
	weights := fmt.Sprintf("example weights for step %d: %x\n", task.Job.TargetStep, h.Sum(nil))
	return os.WriteFile(filepath.Join(dir, "adapter_model.bin"), []byte(weights), 0o644)
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v) // plain values
	return b
}
