package storage

// MergeOps folds parts of the same call within a run of consecutive parts
// into one part, so storage writes each call at most once per run. Updates
// and deletes stay in place and end the run, which keeps their ordering
// relative to the parts around them. index maps each input op to its
// output op.
func MergeOps(ops []CallOp) (merged []CallOp, index []int) {
	merged = make([]CallOp, 0, len(ops))
	index = make([]int, len(ops))
	run := make(map[callKey]int)
	for i, op := range ops {
		if op.Part == nil {
			clear(run)
			index[i] = len(merged)
			merged = append(merged, op)
			continue
		}
		key := callKey{op.Part.Call.ProjectID, op.Part.Call.ID}
		if at, ok := run[key]; ok {
			FoldPart(merged[at].Part, op.Part)
			index[i] = at
			continue
		}
		p := *op.Part
		run[key] = len(merged)
		index[i] = len(merged)
		merged = append(merged, CallOp{Part: &p})
	}
	return merged, index
}

type callKey struct{ project, id string }

// FoldPart applies src, which arrived after dst, on top of dst: each side
// src carries overwrites that side of dst (last write wins per side). It is
// the one merge rule for parts of a call, whether both come from one batch
// (MergeOps) or dst is the row a backend stored earlier.
func FoldPart(dst, src *CallPart) {
	if src.Kind.HasStart() {
		copyStart(&dst.Call, &src.Call)
	}
	if src.Kind.HasEnd() {
		copyEnd(&dst.Call, &src.Call)
	}
	dst.Kind |= src.Kind
}

// startFields and endFields are the fields each side of a part carries.
var (
	startFields = CallFieldsOf(SideStart)
	endFields   = CallFieldsOf(SideEnd)
)

func copyStart(dst, src *Call) { copyFields(startFields, dst, src) }

func copyEnd(dst, src *Call) { copyFields(endFields, dst, src) }

func copyFields(fields []CallField, dst, src *Call) {
	for _, f := range fields {
		copyField(f.Of(dst), f.Of(src))
	}
}
