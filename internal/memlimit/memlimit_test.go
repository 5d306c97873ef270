package memlimit

import "testing"

func TestLimitFollowsReservations(t *testing.T) {
	cases := []struct {
		name     string
		env      string
		reserves []int64
		want     []int64 // the limit set after New and each Reserve; nil: never set
	}{
		{"budget, then the indexes on top", "", []int64{100 << 20, 600 << 20, 0}, []int64{Budget, Budget + 100<<20, Budget + 600<<20, Budget}},
		{"a negative reservation is none", "", []int64{-5}, []int64{Budget, Budget}},
		{"GOMEMLIMIT set by the user is kept", "2GiB", []int64{600 << 20}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			l := &Limit{userSet: tc.env != "", set: func(v int64) int64 { got = append(got, v); return 0 }}
			l.apply()
			for _, r := range tc.reserves {
				l.Reserve(r)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("limits set %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("limits set %v, want %v", got, tc.want)
				}
			}
			if tc.env != "" && l.Bytes() != 0 {
				t.Fatalf("Bytes() = %d under the user's GOMEMLIMIT", l.Bytes())
			}
		})
	}
}
