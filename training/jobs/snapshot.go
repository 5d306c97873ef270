package jobs

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/weftdev/weft/storage"
)

// snapshotVersion is the format of Snapshot's encoding.
const snapshotVersion = 1

type snapshotForm struct {
	V      int                   `json:"v"`
	Pos    int64                 `json:"pos"`
	Now    time.Time             `json:"now"`
	Jobs   []storage.TrainingJob `json:"jobs"`
	Closed []string              `json:"closed"`
}

// Snapshot encodes the machine's state: its position, clock and open
// jobs. Equal machines encode equally.
func (m *Machine) Snapshot() []byte {
	b, _ := json.Marshal(snapshotForm{V: snapshotVersion, Pos: m.pos, Now: m.now, Jobs: m.Open(), Closed: m.closed}) // plain values
	return b
}

// DecodeSnapshot rebuilds a machine from Snapshot's encoding.
func DecodeSnapshot(b []byte) (*Machine, error) {
	var f snapshotForm
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("job queue snapshot: %w", err)
	}
	if f.V != snapshotVersion {
		return nil, fmt.Errorf("job queue snapshot: format %d is not %d; this weft is older than the one that wrote it", f.V, snapshotVersion)
	}
	return Restore(f.Jobs, f.Closed, f.Pos, f.Now), nil
}
