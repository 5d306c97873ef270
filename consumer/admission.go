package consumer

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/storage"
)

// Admission is the bound every queue of the write path applies: the
// records and bytes admitted and not yet released, each within a
// setting. A request larger than a bound on its own can never be
// admitted and is storage.ErrTooLarge, naming the settings (split it); one
// that does not fit beside what is held is ErrOverloaded (retry later).
// It keeps its own gauges.
//
// It has no lock: its owner admits and releases under its own, together
// with its own state (stopped, replaying), so that a stop and an
// admission never cross.
type Admission struct {
	maxOps           int
	maxBytes         int64
	opsKey, bytesKey string
	ops              int
	bytes            int64
	size, held       prometheus.Gauge // nil: not reported
}

// NewAdmission bounds a queue to maxOps records and maxBytes bytes, the
// settings opsKey and bytesKey; size and bytes, when not nil, report
// what it holds.
func NewAdmission(maxOps int, maxBytes int64, opsKey, bytesKey string, size, bytes prometheus.Gauge) Admission {
	return Admission{maxOps: maxOps, maxBytes: maxBytes, opsKey: opsKey, bytesKey: bytesKey, size: size, held: bytes}
}

// Admit takes room for ops records of bytes bytes, or says why not.
func (a *Admission) Admit(ops int, bytes int64) error {
	if ops > a.maxOps || bytes > a.maxBytes {
		return fmt.Errorf("%w: %d records / %d bytes is above %s / %s on its own; split it",
			storage.ErrTooLarge, ops, bytes, a.opsKey, a.bytesKey)
	}
	if a.ops+ops > a.maxOps || a.bytes+bytes > a.maxBytes {
		return ErrOverloaded
	}
	a.ops += ops
	a.bytes += bytes
	a.report()
	return nil
}

// Release gives back what an admission took.
func (a *Admission) Release(ops int, bytes int64) {
	a.ops -= ops
	a.bytes -= bytes
	a.report()
}

// Held is what is admitted and not yet released.
func (a *Admission) Held() (ops int, bytes int64) { return a.ops, a.bytes }

// Nearly reports that either bound is at least num/den full.
func (a *Admission) Nearly(num, den int) bool {
	return a.ops >= a.maxOps/den*num || a.bytes >= a.maxBytes/int64(den)*int64(num)
}

func (a *Admission) report() {
	if a.size != nil {
		a.size.Set(float64(a.ops))
	}
	if a.held != nil {
		a.held.Set(float64(a.bytes))
	}
}
