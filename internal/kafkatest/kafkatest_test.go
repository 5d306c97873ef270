package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

func TestStartListensOnLoopback(t *testing.T) {
	tests := []struct {
		name    string
		opts    []Option
		brokers int
	}{
		{name: "default", brokers: 1},
		{name: "three brokers", opts: []Option{WithBrokers(3)}, brokers: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Start(t, tc.opts...)
			addrs := c.Addrs()
			if len(addrs) != tc.brokers {
				t.Fatalf("got %d addresses %v, want %d", len(addrs), addrs, tc.brokers)
			}
			for _, a := range addrs {
				host, _, err := net.SplitHostPort(a)
				if err != nil || host != "127.0.0.1" {
					t.Fatalf("address %q is not on 127.0.0.1 (err %v)", a, err)
				}
			}
		})
	}
}

func TestCloseIsIdempotentAndStopsListening(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	addr := c.Addrs()[0]
	c.Close()
	c.Close()
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("%s still accepts connections after Close", addr)
	}
}

func TestAdminCreateTopic(t *testing.T) {
	c := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(c.Addrs()...)}
	res, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: "spans", NumPartitions: 6, ReplicationFactor: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Errors["spans"]; err != nil {
		t.Fatalf("create topic: %v", err)
	}
	res, err = client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: "spans", NumPartitions: 6, ReplicationFactor: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Errors["spans"], kafka.TopicAlreadyExists) {
		t.Fatalf("second create: got %v, want TopicAlreadyExists", res.Errors["spans"])
	}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{"spans"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 6 {
		t.Fatalf("metadata: got %+v, want one topic with 6 partitions", md.Topics)
	}
}

func TestUnknownTopicIsRejectedUnlessAutoCreated(t *testing.T) {
	tests := []struct {
		name    string
		opts    []Option
		wantErr bool
	}{
		{name: "no auto create", wantErr: true},
		{name: "auto create", opts: []Option{WithAutoCreateTopics()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Start(t, tc.opts...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			w := &kafka.Writer{Addr: kafka.TCP(c.Addrs()...), Topic: "unknown",
				AllowAutoTopicCreation: true, BatchTimeout: 5 * time.Millisecond, MaxAttempts: 1}
			defer w.Close()
			err := w.WriteMessages(ctx, kafka.Message{Value: []byte("x")})
			if (err != nil) != tc.wantErr {
				t.Fatalf("write: got err %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

const total = 2000

// TestProduceConsumeCommitResume writes with acks=all, consumes half with one
// group member that commits, then checks a new member resumes exactly at the
// committed offsets: nothing missing, nothing delivered twice.
func TestProduceConsumeCommitResume(t *testing.T) {
	c := Start(t, WithTopic("events", 4))
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	produce(ctx, t, c.Addrs())

	first := consume(ctx, t, c.Addrs(), total/2)
	if len(first) != total/2 {
		t.Fatalf("first reader committed %d messages, want %d", len(first), total/2)
	}
	second := consume(ctx, t, c.Addrs(), total-len(first))
	for v := range second {
		if first[v] {
			t.Errorf("message %s delivered again after its offset was committed", v)
		}
	}
	for i := range total {
		v := strconv.Itoa(i)
		if !first[v] && !second[v] {
			t.Errorf("message %s never delivered", v)
		}
	}
}

func produce(ctx context.Context, t *testing.T, addrs []string) {
	t.Helper()
	w := &kafka.Writer{
		Addr:         kafka.TCP(addrs...),
		Topic:        "events",
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchSize:    500,
		BatchTimeout: 5 * time.Millisecond,
	}
	defer w.Close()
	batch := make([]kafka.Message, 0, 500)
	for i := range total {
		v := strconv.Itoa(i)
		batch = append(batch, kafka.Message{Key: []byte("project-" + strconv.Itoa(i%7)), Value: []byte(v)})
		if len(batch) == cap(batch) {
			if err := w.WriteMessages(ctx, batch...); err != nil {
				t.Fatalf("write: %v", err)
			}
			batch = batch[:0]
		}
	}
}

// consume reads n messages as a member of group g1, committing every 100,
// and returns the values it committed.
func consume(ctx context.Context, t *testing.T, addrs []string, n int) map[string]bool {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: addrs, GroupID: "g1", Topic: "events",
		StartOffset: kafka.FirstOffset, CommitInterval: 0,
		MaxWait: 50 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond,
		SessionTimeout: 10 * time.Second, RebalanceTimeout: 10 * time.Second,
	})
	defer func() {
		if err := r.Close(); err != nil {
			t.Errorf("close reader: %v", err)
		}
	}()
	got := map[string]bool{}
	var pending []kafka.Message
	for len(got) < n {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("fetch after %d messages: %v", len(got), err)
		}
		pending = append(pending, m)
		if len(pending) == 100 || len(got)+len(pending) == n {
			if err := r.CommitMessages(ctx, pending...); err != nil {
				t.Fatalf("commit: %v", err)
			}
			for _, p := range pending {
				if got[string(p.Value)] {
					t.Errorf("message %s fetched twice by one reader", p.Value)
				}
				got[string(p.Value)] = true
			}
			pending = pending[:0]
		}
	}
	return got
}

func ExampleNew() {
	c, err := New(WithTopic("events", 8))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println(len(c.Addrs()))
	// Output: 1
}
