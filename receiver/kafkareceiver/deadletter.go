package kafkareceiver

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

// Headers added to a dead-lettered record, beside the original headers.
const (
	HeaderReason    = "weft-dlq-reason"
	HeaderTopic     = "weft-dlq-topic"
	HeaderPartition = "weft-dlq-partition"
	HeaderOffset    = "weft-dlq-offset"
	HeaderTime      = "weft-dlq-time"
	// HeaderTruncated holds the original value size when the value was cut
	// to fit max_message_bytes (only records produced by other clients
	// with a larger limit can need it).
	HeaderTruncated = "weft-dlq-truncated"
)

// maxReasonBytes caps the reason header; a storage error can quote a
// whole statement.
const maxReasonBytes = 1024

// letter is a record set aside and why.
type letter struct {
	msg    kafka.Message
	reason string
}

// deadLetter writes the letters to the dead-letter topic, retrying while
// Kafka is unavailable. Their batch is committed only after this
// succeeded, so a record is never lost between the two topics. It
// reports false when ctx ended before the write succeeded.
func (p *Receiver) deadLetter(ctx context.Context, letters []letter) bool {
	msgs := make([]kafka.Message, len(letters))
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for i, l := range letters {
		msgs[i] = deadLetterMessage(l, now, p.cfg.MaxMessageBytes)
	}
	err := p.attempt(ctx, "dead-letter", func(ctx context.Context) error {
		if err := p.dlq.WriteMessages(ctx, msgs...); err != nil {
			// Even a permanent-looking Kafka error here must not drop
			// the record: keep it retryable.
			return fmt.Errorf("write %d records to %s: %v", len(msgs), p.cfg.DeadLetterTopic, err)
		}
		return nil
	})
	if err != nil {
		return false
	}
	p.stats.deadLettered.Add(int64(len(letters)))
	p.metrics.deadLettered(len(letters))
	for _, l := range letters {
		p.limited.Log(slog.LevelError, "dead-letter", "a record was set aside in the dead-letter topic with its key and value; fix what the reason names, then replay it; see docs/operations.md#weftkafkadeadletters",
			"topic", l.msg.Topic, "partition", l.msg.Partition, "offset", l.msg.Offset,
			"dead_letter_topic", p.cfg.DeadLetterTopic, "reason", l.reason,
			"dead_lettered_total", p.stats.deadLettered.Load())
	}
	return true
}

func deadLetterMessage(l letter, at string, maxBytes int) kafka.Message {
	reason := l.reason
	if len(reason) > maxReasonBytes {
		reason = reason[:maxReasonBytes]
	}
	value := l.msg.Value
	headers := make([]kafka.Header, 0, len(l.msg.Headers)+6)
	if room := max(maxBytes-len(l.msg.Key), 0); len(value) > room {
		// A record the dead-letter topic refuses would block its
		// partition forever; a cut copy keeps the evidence.
		headers = append(headers, kafka.Header{Key: HeaderTruncated, Value: []byte(strconv.Itoa(len(value)))})
		value = value[:room]
	}
	headers = append(headers, l.msg.Headers...)
	headers = append(headers,
		kafka.Header{Key: HeaderReason, Value: []byte(reason)},
		kafka.Header{Key: HeaderTopic, Value: []byte(l.msg.Topic)},
		kafka.Header{Key: HeaderPartition, Value: []byte(strconv.Itoa(l.msg.Partition))},
		kafka.Header{Key: HeaderOffset, Value: []byte(strconv.FormatInt(l.msg.Offset, 10))},
		kafka.Header{Key: HeaderTime, Value: []byte(at)},
	)
	return kafka.Message{Key: l.msg.Key, Value: value, Headers: headers}
}
