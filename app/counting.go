package app

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/storage"
)

// countingCalls counts the records a receiver hands on as accepted (made
// durable) or refused, for weft_receiver_*_calls.
type countingCalls struct {
	next              consumer.Calls
	accepted, refused prometheus.Counter
}

func (c countingCalls) ConsumeCalls(ctx context.Context, ops []storage.CallOp) ([]storage.CallOpResult, error) {
	res, err := c.next.ConsumeCalls(ctx, ops)
	if err != nil {
		c.refused.Add(float64(len(ops)))
	} else {
		c.accepted.Add(float64(len(ops)))
	}
	return res, err
}
