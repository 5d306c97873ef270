package kafkareceiver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

// gateWriter holds the first write until released, so a test can stop the
// processor while a batch is in hand.
type gateWriter struct {
	storage.CallWriter
	entered, release chan struct{}
	once             sync.Once
}

func (g *gateWriter) WriteCallOps(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	g.once.Do(func() {
		close(g.entered)
		<-g.release
	})
	return g.CallWriter.WriteCallOps(ctx, ops)
}

func TestShutdownFinishesAndCommitsTheBatchInHand(t *testing.T) {
	_, cfg := startKafka(t, "calls-shutdown")
	store := openStore(t)
	prod := newProducer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, err := range produceCalls(ctx, prod, projectsCovering(testPartitions, 1), 30, "c", newLedger()) {
		if err != nil {
			t.Fatal(err)
		}
	}
	gate := &gateWriter{CallWriter: store, entered: make(chan struct{}), release: make(chan struct{})}
	proc := startProcessor(t, cfg, gate)
	select {
	case <-gate.entered:
	case <-ctx.Done():
		t.Fatal("the processor never wrote")
	}
	proc.cancel() // shutdown arrives while the write is in progress
	close(gate.release)
	proc.stop(t)

	// The outcome that matters: what was handled is committed, the batch
	// in hand included (how many batches that took is not the point).
	s := proc.Stats()
	if s.Records == 0 {
		t.Fatalf("stats %+v; want the batch in hand finished", s)
	}
	var committed int64
	for _, off := range committedOffsets(t, cfg) {
		committed += max(off, 0)
	}
	if committed != s.Records {
		t.Fatalf("committed %d records, handled %d: the batch in hand must be committed on shutdown", committed, s.Records)
	}
}
