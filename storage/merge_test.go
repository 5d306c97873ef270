package storage

import (
	"testing"
	"time"
)

func startOp(id string) CallOp {
	return CallOp{Part: &CallPart{Kind: PartStart, Call: Call{ProjectID: "e/p", ID: id, OpName: "op"}}}
}

func TestMergeOps(t *testing.T) {
	t1 := time.Unix(10, 0)
	end := CallOp{Part: &CallPart{Kind: PartEnd, Call: Call{ProjectID: "e/p", ID: "a", EndedAt: &t1}}}
	del := CallOp{Delete: &CallDelete{ProjectID: "e/p", IDs: []string{"a"}}}
	tests := []struct {
		name      string
		ops       []CallOp
		wantKinds []PartKind // 0 for non-part ops
		wantIndex []int
	}{
		{"start and end merge", []CallOp{startOp("a"), end}, []PartKind{PartComplete}, []int{0, 0}},
		{"different calls stay apart", []CallOp{startOp("a"), startOp("b")}, []PartKind{PartStart, PartStart}, []int{0, 1}},
		{"delete ends the run", []CallOp{startOp("a"), del, end}, []PartKind{PartStart, 0, PartEnd}, []int{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			merged, index := MergeOps(tc.ops)
			if len(merged) != len(tc.wantKinds) {
				t.Fatalf("merged %d ops, want %d", len(merged), len(tc.wantKinds))
			}
			for i, op := range merged {
				var k PartKind
				if op.Part != nil {
					k = op.Part.Kind
				}
				if k != tc.wantKinds[i] {
					t.Errorf("op %d kind %v, want %v", i, k, tc.wantKinds[i])
				}
			}
			for i := range index {
				if index[i] != tc.wantIndex[i] {
					t.Errorf("index = %v, want %v", index, tc.wantIndex)
				}
			}
		})
	}
}
