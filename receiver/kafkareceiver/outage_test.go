package kafkareceiver

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/weftdev/weft/internal/kafkabase"
	"github.com/weftdev/weft/internal/kafkatest"
	"github.com/weftdev/weft/storage"
)

// TestKafkaOutageAnswersUnavailableAndLosesNothing stops the cluster under
// a running producer: Submit answers ErrUnavailable at once, and after the
// cluster comes back (same port, same data) the producer resumes by itself
// and every call acknowledged before the outage is stored.
func TestKafkaOutageAnswersUnavailableAndLosesNothing(t *testing.T) {
	dir, port := t.TempDir(), freePort(t)
	before, err := kafkatest.New(kafkatest.WithPorts(port), kafkatest.WithDataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	cfg := testConfig(before.Addrs(), "calls-kafka-outage")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := kafkabase.EnsureTopics(ctx, cfg, discard); err != nil {
		t.Fatal(err)
	}
	prod := newProducer(t, cfg)
	projects := projectsCovering(testPartitions, 1)
	l := newLedger()
	for _, err := range produceCalls(ctx, prod, projects, 20, "before", l) {
		if err != nil {
			t.Fatal(err)
		}
	}

	before.Close()
	_, err = prod.ConsumeCalls(ctx, []storage.CallOp{startOp(projects[0], "during")})
	if !errors.Is(err, storage.ErrUnavailable) || ctx.Err() != nil {
		t.Fatalf("Submit during the outage = %v (deadline used up: %v); want ErrUnavailable at once", err, ctx.Err() != nil)
	}

	kafkatest.Start(t, kafkatest.WithPorts(port), kafkatest.WithDataDir(dir))
	waitFor(t, 30*time.Second, "the producer to reach the restarted cluster", func() bool {
		_, err := prod.ConsumeCalls(ctx, []storage.CallOp{endOp(projects[0], "probe"), startOp(projects[0], "probe")})
		return err == nil
	})
	l.add(projects[0], "probe")
	for i, err := range produceCalls(ctx, prod, projects, 5, "after", l) {
		if err != nil {
			t.Fatalf("project %s after the restart: %v", projects[i], err)
		}
	}
	store := openStore(t)
	startProcessor(t, cfg, store)
	waitLanded(t, store, l)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
