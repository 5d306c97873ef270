package kafkabase

import (
	"context"
	"fmt"
	"log/slog"
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

// kafkaErrorLogger routes kafka-go's error logging (one line per failed
// attempt) through the limiter. Its info logging stays off: it writes a
// line per produced batch.
func (l *LimitedLogger) KafkaErrorLogger(component string) kafka.Logger {
	return kafka.LoggerFunc(func(format string, args ...any) {
		l.Log(slog.LevelWarn, "kafka-go "+component, "kafka client error",
			"component", component, "err", fmt.Sprintf(format, args...))
	})
}
