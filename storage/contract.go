package storage

import (
	"context"
	"iter"

	"github.com/weftdev/weft/pricing"
	"github.com/weftdev/weft/storage/querylang"
)

// CallOp is one ordered write in a call batch: exactly one field is set.
type CallOp struct {
	Part   *CallPart
	Update *CallUpdate
	Delete *CallDelete
}

// ProjectID is the project the op writes to.
func (op CallOp) ProjectID() string {
	switch {
	case op.Part != nil:
		return op.Part.Call.ProjectID
	case op.Update != nil:
		return op.Update.ProjectID
	case op.Delete != nil:
		return op.Delete.ProjectID
	}
	return ""
}

// CallOpResult is the outcome of one CallOp. NumDeleted is set for deletes:
// the number of calls the delete removed, its live requested calls plus
// their live descendants; ids naming no call, or a call deleted before,
// count for nothing (the reference server counts every requested id).
type CallOpResult struct {
	NumDeleted int
}

// CallWriter makes call writes durable.
type CallWriter interface {
	// WriteCallOps applies ops in order, atomically, and returns only when
	// they are durable. Parts of the same call within ops have already been
	// merged by the processor, but parts of a call stored earlier must be
	// merged with the stored row (either side may come first). Every op
	// carries its project id; the caller has authorised it.
	WriteCallOps(ctx context.Context, ops []CallOp) ([]CallOpResult, error)
}

// CallCheckpointer is implemented by stores that take call writes faster
// when their caller keeps its own durable log of them (the embedded store,
// which then writes each call once instead of twice). When
// CallsNeedCheckpoint reports true, a call write is in the store and
// readable when WriteCallOps returns, but durable only once a later
// CheckpointCalls returns: the caller keeps, and replays after a crash,
// every write since the last checkpoint. Replayed writes merge
// idempotently.
type CallCheckpointer interface {
	CallsNeedCheckpoint() bool
	// CheckpointCalls makes every call write returned so far durable.
	CheckpointCalls(ctx context.Context) error
}

// CallCheckpointDeferrer is a CallCheckpointer whose checkpoints cannot
// run beside a long read of calls (the embedded store, ADR 0020):
// TryCheckpointCalls checkpoints unless one is running, and then reports
// false at once, so the caller can put the checkpoint off rather than
// make the read (or, waiting for it, every other read and write) stop.
type CallCheckpointDeferrer interface {
	TryCheckpointCalls(ctx context.Context) (bool, error)
}

// CallsQuery is a storage-neutral calls query, already authorised for
// ProjectID. Where is the parsed query (nil: none), parsed by the caller
// before any answer is written so a syntax error is a clean 400; which
// fields it may read is checked by the backend's compiler.
type CallsQuery struct {
	ProjectID string
	Filter    CallsFilter
	Where     querylang.Expr
	// SortBy nil means the default order (started_at asc, id asc); a
	// non-nil empty slice means no ORDER BY.
	SortBy  []SortBy
	Limit   int64 // 0 = no limit
	Offset  int64
	Columns []string // nil = all columns
	// ExpandColumns lists dotted paths whose ref values are resolved.
	ExpandColumns []string

	// Prices are the candidate prices summary.weave.cost is computed
	// from when the query sorts or filters by it: the project's rows and
	// the default table, as include_costs prices a call. None prices every
	// model at 0.
	Prices []pricing.Price

	IncludeCosts            bool
	IncludeFeedback         bool
	IncludeStorageSize      bool
	IncludeTotalStorageSize bool

	// IncludeUsernames asks for wb_username, which the query API fills
	// from wb_user_id; it also selects wb_user_id.
	IncludeUsernames bool
}

// CallsFilter is the structured filter of a calls query (wire CallsFilter).
type CallsFilter struct {
	OpNames        []string
	InputRefs      []string
	OutputRefs     []string
	ParentIDs      []string
	TraceIDs       []string
	CallIDs        []string
	ThreadIDs      []string // nil = no filter; [] matches nothing
	TurnIDs        []string // nil = no filter; [] matches nothing
	TraceRootsOnly bool
	WBUserIDs      []string
	WBRunIDs       []string
}

// SortBy is one ordering term.
type SortBy struct {
	Field     string
	Direction string // "asc" or "desc"
}

// CallsStats is the answer of a stats query.
type CallsStats struct {
	Count                 int64
	TotalStorageSizeBytes *int64
}

// CallStorageSize holds the sizes requested by include_*_storage_size.
type CallStorageSize struct {
	StorageSizeBytes      *int64
	TotalStorageSizeBytes *int64
}

// StoredCall is a call read back, with optional computed sizes.
type StoredCall struct {
	Call
	CallStorageSize
}

// CallReader answers calls queries. Every method is scoped to the query's
// project; no method reads another project's rows.
type CallReader interface {
	// QueryCalls streams matching, non-deleted calls in the requested order.
	// The sequence stops at the first error, which it yields.
	QueryCalls(ctx context.Context, q CallsQuery) iter.Seq2[StoredCall, error]
	// CountCalls counts matching, non-deleted calls, at most limit when
	// limit > 0.
	CountCalls(ctx context.Context, q CallsQuery, limit int64) (CallsStats, error)
}

// Capabilities says what optional features a backend has.
type Capabilities struct {
	// TTL: the backend expires rows by per-project retention.
	TTL bool
}
