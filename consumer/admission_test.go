package consumer

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weftdev/weft/storage"
)

func TestAdmission(t *testing.T) {
	tests := []struct {
		name           string
		heldOps        int
		heldBytes      int64
		ops            int
		bytes          int64
		want           error
		wantOps        int
		wantBytes      int64
		wantInMessages string
	}{
		{name: "fits", heldOps: 5, heldBytes: 100, ops: 5, bytes: 100, wantOps: 10, wantBytes: 200},
		{name: "records full", heldOps: 8, ops: 3, bytes: 10, want: ErrOverloaded, wantOps: 8},
		{name: "bytes full", heldBytes: 1 << 20, ops: 1, bytes: 1, want: ErrOverloaded, wantBytes: 1 << 20},
		{name: "too many records on its own", ops: 11, bytes: 10, want: storage.ErrTooLarge, wantInMessages: "q.max_ops / q.max_bytes"},
		{name: "too many bytes on its own", ops: 1, bytes: 1<<20 + 1, want: storage.ErrTooLarge, wantInMessages: "split it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			size, held := prometheus.NewGauge(prometheus.GaugeOpts{Name: "s"}), prometheus.NewGauge(prometheus.GaugeOpts{Name: "b"})
			a := NewAdmission(10, 1<<20, "q.max_ops", "q.max_bytes", size, held)
			if err := a.Admit(tc.heldOps, tc.heldBytes); err != nil {
				t.Fatal(err)
			}
			err := a.Admit(tc.ops, tc.bytes)
			ops, bytes := a.Held()
			if !errors.Is(err, tc.want) || ops != tc.wantOps || bytes != tc.wantBytes {
				t.Fatalf("Admit = %v, holding %d / %d; want %v, %d / %d", err, ops, bytes, tc.want, tc.wantOps, tc.wantBytes)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantInMessages) {
				t.Fatalf("error %q does not say %q", err, tc.wantInMessages)
			}
			if testutil.ToFloat64(size) != float64(ops) || testutil.ToFloat64(held) != float64(bytes) {
				t.Fatalf("gauges %v / %v, want %d / %d", testutil.ToFloat64(size), testutil.ToFloat64(held), ops, bytes)
			}
			a.Release(ops, bytes)
			if ops, bytes := a.Held(); ops != 0 || bytes != 0 || testutil.ToFloat64(size) != 0 {
				t.Fatalf("after release: %d / %d", ops, bytes)
			}
		})
	}
}

func TestNearly(t *testing.T) {
	a := NewAdmission(100, 1000, "o", "b", nil, nil)
	_ = a.Admit(89, 10)
	if a.Nearly(9, 10) {
		t.Fatal("89 of 100 is not nine tenths")
	}
	_ = a.Admit(1, 0)
	if !a.Nearly(9, 10) {
		t.Fatal("90 of 100 is nine tenths")
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err       error
		kind      Kind
		retryable bool
	}{
		{storage.ErrInvalidArgument, KindInvalid, false},
		{storage.ErrTooLarge, KindTooLarge, false},
		{ErrOverloaded, KindOverloaded, true},
		{ErrStopped, KindUnavailable, true},
		{storage.ErrUnavailable, KindUnavailable, true},
		{errors.New("boom"), KindOther, false},
		{nil, KindOther, false},
	}
	for _, tc := range tests {
		if k := Classify(tc.err); k != tc.kind || Retryable(tc.err) != tc.retryable {
			t.Errorf("Classify(%v) = %v (retryable %v), want %v (%v)", tc.err, k, Retryable(tc.err), tc.kind, tc.retryable)
		}
	}
}
