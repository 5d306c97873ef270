package monitors

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

type fakeWriter struct {
	ops        int
	checkpoint int
}

func (w *fakeWriter) WriteCallOps(_ context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	w.ops += len(ops)
	return make([]storage.CallOpResult, len(ops)), nil
}
func (w *fakeWriter) CallsNeedCheckpoint() bool                        { return true }
func (w *fakeWriter) CheckpointCalls(context.Context) error            { w.checkpoint++; return nil }
func (w *fakeWriter) TryCheckpointCalls(context.Context) (bool, error) { return false, nil }

type fakeQueue struct {
	got  []storage.MonitorCall
	fail int
}

func (q *fakeQueue) EnqueueMonitorCalls(_ context.Context, calls []storage.MonitorCall) error {
	if q.fail > 0 {
		q.fail--
		return errors.New("disk full")
	}
	q.got = append(q.got, calls...)
	return nil
}

type wantsOnly map[string]bool

func (w wantsOnly) Wants(project, call string) bool { return w[project+"/"+call] }

func TestTapQueuesEndedCallsMonitorsWant(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	part := func(project, id string, kind storage.PartKind) storage.CallOp {
		return storage.CallOp{Part: &storage.CallPart{Kind: kind, Call: storage.Call{ProjectID: project, ID: id}}}
	}
	ops := []storage.CallOp{
		part("acme/app", "ended", storage.PartEnd),
		part("acme/app", "complete", storage.PartComplete),
		part("acme/app", "started", storage.PartStart),      // no end yet
		part("acme/app", "unsampled", storage.PartComplete), // no monitor wants it
		part("acme/other", "ended", storage.PartEnd),        // no monitor there
		{Update: &storage.CallUpdate{ProjectID: "acme/app", ID: "ended"}},
	}
	wants := wantsOnly{"acme/app/ended": true, "acme/app/complete": true, "acme/app/started": true}
	tests := []struct {
		name   string
		fail   int
		want   []string
		errors bool
	}{
		{name: "queued", want: []string{"ended", "complete"}},
		{name: "a failed queueing is tried again", fail: 2, want: []string{"ended", "complete"}},
		{name: "a queue that keeps failing fails the write", fail: enqueueAttempts, errors: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, q := &fakeWriter{}, &fakeQueue{fail: tc.fail}
			tap := NewTap(w, q, wants, func() time.Time { return at })
			_, err := tap.WriteCallOps(context.Background(), ops)
			if (err != nil) != tc.errors {
				t.Fatalf("err = %v, want an error: %v", err, tc.errors)
			}
			var ids []string
			for _, c := range q.got {
				if c.ProjectID != "acme/app" || !c.QueuedAt.Equal(at) || !c.NextAt.Equal(at) {
					t.Fatalf("queued %+v", c)
				}
				ids = append(ids, c.CallID)
			}
			if !reflect.DeepEqual(ids, tc.want) {
				t.Fatalf("queued %v, want %v", ids, tc.want)
			}
		})
	}
}

func TestTapAnswersForTheStoreItWraps(t *testing.T) {
	w := &fakeWriter{}
	tap := NewTap(w, &fakeQueue{}, wantsOnly{}, time.Now)
	if !tap.CallsNeedCheckpoint() {
		t.Fatal("the tap hides the store's need for checkpoints")
	}
	if err := tap.CheckpointCalls(context.Background()); err != nil || w.checkpoint != 1 {
		t.Fatalf("checkpoint = %v, %d", err, w.checkpoint)
	}
	if done, _ := tap.TryCheckpointCalls(context.Background()); done {
		t.Fatal("the tap answered for a checkpoint the store put off")
	}
	if err := tap.ProbeWrites(context.Background()); err != nil || w.ops != 0 {
		t.Fatalf("probe = %v after %d ops", err, w.ops)
	}
}
