package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/weftdev/weft/internal/kafkabase"
)

// groupAssignments returns, per member of the processors' consumer group,
// the call-topic partitions it is assigned.
func groupAssignments(t *testing.T, brokers string) map[string][]int {
	t.Helper()
	cfg := kafkabase.DefaultConfig()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(brokers), Timeout: 10 * time.Second}
	resp, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{cfg.Consumer.Group}})
	if err != nil {
		t.Fatalf("describe consumer group: %v", err)
	}
	out := map[string][]int{}
	for _, g := range resp.Groups {
		for _, m := range g.Members {
			out[m.MemberID] = nil
			for _, tp := range m.MemberAssignments.Topics {
				if tp.Topic == cfg.Topic {
					out[m.MemberID] = append(out[m.MemberID], tp.Partitions...)
				}
			}
		}
	}
	return out
}

// waitAssigned waits until the group has exactly n members, each with at
// least one partition, and returns the assignments.
func waitAssigned(t *testing.T, brokers string, n int) map[string][]int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := groupAssignments(t, brokers)
		ok := len(got) == n
		for _, parts := range got {
			ok = ok && len(parts) > 0
		}
		if ok {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer group never settled on %d members with partitions each: %v", n, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// projectOn returns a project id whose records the ingest role puts on one
// of the partitions owned (records are keyed by project), out of total.
func projectOn(t *testing.T, owned []int, total int) string {
	t.Helper()
	parts := make([]int, total)
	for i := range parts {
		parts[i] = i
	}
	for i := range 10_000 {
		id := fmt.Sprintf("acme/kill-%d", i)
		at := kafka.Murmur2Balancer{Consistent: true}.Balance(kafka.Message{Key: []byte(id)}, parts...)
		if slices.Contains(owned, at) {
			return id
		}
	}
	t.Fatalf("no project lands on partitions %v of %d", owned, total)
	return ""
}
