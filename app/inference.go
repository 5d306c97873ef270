package app

import (
	"context"
	"os"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/automations"
	"github.com/weftdev/weft/inference"
	"github.com/weftdev/weft/inference/callrecord"
	"github.com/weftdev/weft/inference/catalog"
)

// buildInference prices calls with the model catalog in every role, and
// in a process that ingests builds the gateway, whose traced calls enter
// the write path at its front like any receiver's.
func (s *Server) buildInference(ctx context.Context) error {
	var getenv func(string) string
	if s.roles.Ingest {
		getenv = os.Getenv
	}
	cat, err := catalog.New(s.cfg.Inference.Providers, s.cfg.Inference.Models, getenv, catalog.WithLoRA(s.cfg.Inference.LoRA.Upstreams))
	if err != nil {
		return err
	}
	s.prices = s.prices.With(cat.Prices())
	if !s.roles.Ingest {
		return nil
	}
	rec, err := s.startCallRecorder(ctx)
	if err != nil {
		return err
	}
	s.gateway, err = inference.New(inference.Options{
		Config: s.cfg.Inference, Catalog: cat, Keys: auth.StoreVerifier{Store: s.keys}, Recorder: rec,
		Inflight: s.inflight, Registry: s.metrics.Registry, Logger: s.logger.With("component", "inference"),
		Adapters: s.training.adapters(), Budgets: s.automations.alerts,
		Aliases: registryAliases{objects: s.automations.objects, training: s.training},
		Limits:  s.store, Spend: automations.Measurer{Calls: s.store, Price: s.usageCost}, Replica: leaseOwner(),
	})
	if err != nil {
		return err
	}
	moved := s.gateway.AliasMoved
	s.automations.aliasMoves.moved.Store(&moved)
	return nil
}

// startCallRecorder builds the queue between the gateway and the write
// path; it is a part of the process after the write path, so it drains
// into the path before the parts it feeds shut down.
func (s *Server) startCallRecorder(ctx context.Context) (*callrecord.Recorder, error) {
	m, err := callrecord.NewMetrics(s.metrics.Registry)
	if err != nil {
		return nil, err
	}
	front := countingCalls{next: s.write.front,
		accepted: s.metrics.ReceiverAcceptedCalls.WithLabelValues("inference", "http"),
		refused:  s.metrics.ReceiverRefusedCalls.WithLabelValues("inference", "http")}
	cfg := callrecord.DefaultConfig(s.cfg.Inference.TraceQueueCalls, s.cfg.Inference.TraceQueueBytes)
	rec := callrecord.New(front, cfg, m, s.logger.With("component", "inference_trace"))
	s.callRecorder = rec
	return rec, nil
}
