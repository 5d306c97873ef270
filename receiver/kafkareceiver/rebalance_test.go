package kafkareceiver

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestRebalanceKeepsEveryCallExactlyOnce starts a second processor in the
// group while the first runs, then stops the first: the partitions move
// twice and every acknowledged call still lands once.
func TestRebalanceKeepsEveryCallExactlyOnce(t *testing.T) {
	_, cfg := startKafka(t, "calls-rebalance")
	store := openStore(t)
	prod := newProducer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	projects := projectsCovering(testPartitions, 1)
	l := newLedger()
	produce := func(prefix string, perProject int) {
		t.Helper()
		for _, err := range produceCalls(ctx, prod, projects, perProject, prefix, l) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}

	first := startProcessor(t, cfg, store)
	produce("a", 20)
	waitFor(t, 30*time.Second, "the first processor to work", func() bool { return first.Stats().Records > 0 })

	second := startProcessor(t, cfg, store)
	// Keep records flowing through the rebalance until the newcomer has
	// been given partitions and handled some of them.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; second.Stats().Records == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatal("the second processor got no records within 30s")
		}
		produce(fmt.Sprintf("b%d", i), 2)
	}
	firstBefore := first.Stats().Records

	first.stop(t)
	secondBefore := second.Stats().Records
	produce("c", 20)
	waitLanded(t, store, l)
	if firstBefore == 0 {
		t.Error("the first processor handled nothing")
	}
	handedOver := int64(2 * 20 * len(projects))
	waitFor(t, 30*time.Second, "the second processor to take over every partition", func() bool {
		return second.Stats().Records-secondBefore >= handedOver
	})
}
