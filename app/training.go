package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/inference"
	"github.com/weftdev/weft/training"
	"github.com/weftdev/weft/training/api"
	"github.com/weftdev/weft/training/queue"
	"github.com/weftdev/weft/training/queue/kafkaqueue"
)

// trainingPart is the training service in a process that serves it:
// the job queue (this process's, or with Kafka the shared log's replica),
// the service and its HTTP API.
type trainingPart struct {
	svc *training.Service
	api *api.API
	// queue is the job queue, a component of the process.
	queue component.Component
}

// tickInterval is how often a queue looks for leases that ended.
const tickInterval = time.Second

// buildTraining wires the training service where this process serves
// the API. With Kafka every API role follows the shared command log;
// without it the queue lives in the ingest process, which must be the
// only one (see docs/adr/0014-training-job-queue.md).
func (s *Server) buildTraining(ctx context.Context) error {
	kafka := len(s.cfg.BrokerList()) > 0
	if !(s.roles.Ingest || (kafka && s.roles.Query)) {
		return nil
	}
	part := &trainingPart{}
	seq, err := part.openQueue(ctx, s.cfg.Training, s, kafka)
	if err != nil {
		return fmt.Errorf("training job queue: %w", err)
	}
	part.svc = training.New(training.Deps{Config: s.cfg.Training, Store: s.store, Objects: s.automations.objects,
		Files: s.store, Queue: seq, Now: time.Now})
	part.api = api.New(part.svc, auth.StoreVerifier{Store: s.keys}, s.cfg.MaxRequestBytes, s.cfg.MaxFileBytes, s.inflight,
		s.logger.With("component", "training"))
	s.training = part
	return nil
}

// openQueue opens the Kafka log's replica or the in-process queue.
func (p *trainingPart) openQueue(ctx context.Context, cfg training.Config, s *Server, kafka bool) (queue.Sequencer, error) {
	logger := s.logger.With("component", "training_queue")
	if kafka {
		kc := s.cfg.Kafka
		kc.Brokers = s.cfg.BrokerList()
		q, err := kafkaqueue.New(ctx, kafkaqueue.Options{Kafka: kc, Topic: cfg.CommandsTopic, Store: s.store, Tick: tickInterval,
			SnapshotEvery: cfg.SnapshotInterval, Now: time.Now, Logger: logger})
		if err != nil {
			return nil, err
		}
		p.queue = q
		return q, nil
	}
	l, err := queue.NewLocal(ctx, s.store, tickInterval, time.Now, logger)
	if err != nil {
		return nil, err
	}
	p.queue = l
	return l, nil
}

// part is the job queue as a part of the process; nil where training
// is not served.
func (p *trainingPart) part() component.Component {
	if p == nil {
		return nil
	}
	return p.queue
}

// stopWaiting ends the lease requests waiting for a job, so shutdown
// does not wait out their long polls.
func (p *trainingPart) stopWaiting() {
	if p != nil {
		p.svc.StopWaiting()
	}
}

// register adds the training API.
func (p *trainingPart) register(mux *http.ServeMux) {
	if p != nil {
		p.api.Register(mux)
	}
}

// adapters lets the gateway resolve checkpoints; nil without training.
func (p *trainingPart) adapters() inference.Adapters {
	if p == nil {
		return nil
	}
	return checkpointAdapters{svc: p.svc}
}

// checkpointAdapters is the training service as the gateway's resolver.
type checkpointAdapters struct{ svc *training.Service }

func (c checkpointAdapters) ResolveAdapter(ctx context.Context, p auth.Principal, model string) (inference.Adapter, error) {
	a, err := c.svc.ResolveAdapter(ctx, p, model)
	return inference.Adapter{Name: a.Name, BaseModel: a.BaseModel}, err
}
