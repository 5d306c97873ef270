package kafkabase

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// logEvery is how often one kind of repeated error is logged. An outage
// produces an error per attempt and per record; one line per kind and
// interval, with the number suppressed, says the same without the flood.
const logEvery = 10 * time.Second

// limitedLogger logs at most once per logEvery for each key.
type LimitedLogger struct {
	logger *slog.Logger
	now    func() time.Time

	mu         sync.Mutex
	last       map[string]time.Time
	suppressed map[string]int
}

func NewLimitedLogger(l *slog.Logger) *LimitedLogger {
	return &LimitedLogger{logger: l, now: time.Now, last: map[string]time.Time{}, suppressed: map[string]int{}}
}

// log writes msg unless key was logged within logEvery; the next line
// written for key carries how many were skipped.
func (l *LimitedLogger) Log(level slog.Level, key, msg string, args ...any) {
	l.mu.Lock()
	now := l.now()
	if last, ok := l.last[key]; ok && now.Sub(last) < logEvery {
		l.suppressed[key]++
		l.mu.Unlock()
		return
	}
	skipped := l.suppressed[key]
	l.last[key] = now
	l.suppressed[key] = 0
	l.mu.Unlock()
	if skipped > 0 {
		args = append(args, "suppressed", skipped)
	}
	l.logger.Log(context.Background(), level, msg, args...)
}

// KafkaErrorLogger routes kafka-go's error logging (one line per failed
// attempt) through the limiter. Its info logging stays off: it writes a
// line per produced batch.
//
// A reader's fetch that outlives its read deadline is logged at DEBUG:
// kafka-go sets the deadline to the fetch's MaxWait and asks the broker to
// answer within three quarters of it, so a broker's empty answer arriving
// late on a busy machine ends the fetch with an i/o timeout while idle
// and under load alike. The reader reconnects and fetches again from the
// same offset; nothing is lost, and there is nothing to do. A broker that
// is really gone also fails dials, commits and heartbeats, which stay
// warnings, and consumer lag (weft_kafka_consumer_lag) shows a stall.
func (l *LimitedLogger) KafkaErrorLogger(component string) kafka.Logger {
	return kafka.LoggerFunc(func(format string, args ...any) {
		err := fmt.Sprintf(format, args...)
		if IsFetchDeadline(err) {
			l.Log(slog.LevelDebug, "kafka-go fetch deadline "+component, "kafka fetch ended at its deadline; fetching again",
				"component", component, "err", err)
			return
		}
		l.Log(slog.LevelWarn, "kafka-go "+component,
			"kafka client error; weft retries on its own. If this repeats, check that the brokers in kafka_brokers (WEFT_KAFKA_BROKERS) are up and reachable from this process",
			"component", component, "err", err)
	})
}

// IsFetchDeadline reports whether a kafka-go reader error is a fetch that
// ran into its read deadline (see KafkaErrorLogger).
func IsFetchDeadline(msg string) bool {
	return strings.HasPrefix(msg, "the kafka reader got an unknown error reading partition") &&
		strings.HasSuffix(msg, "i/o timeout")
}
