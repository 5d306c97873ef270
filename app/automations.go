package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/automations"
	"github.com/weftdev/weft/automations/api"
	"github.com/weftdev/weft/automations/delivery"
	"github.com/weftdev/weft/automations/egress"
	"github.com/weftdev/weft/automations/kafkaevents"
	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/internal/lifecycle"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/storage"
	"github.com/weftdev/weft/traceapi"
)

// automationsPart is webhook automations in this process: the service
// behind the API, the object store whose alias writes record events,
// and, in a process that delivers, the loops that dispatch events and
// send deliveries.
type automationsPart struct {
	svc *automations.Service
	// alerts evaluates CALL_ALERT automations (in a process that
	// delivers) and knows the enforced budgets that are firing.
	alerts  *automations.Alerts
	objects storage.ObjectStore
	// loops run until shutdown; closers close what they used, after.
	loops   []namedPart
	closers []func() error

	// aliasMoves tells the gateway of alias events (inference_aliases.go).
	aliasMoves *aliasEvents
}

// automationsDeps are what every mode shares.
type automationsDeps struct {
	box    *secretbox.Box
	guard  *egress.Guard
	sender *delivery.Sender
	worker *delivery.Worker
	disp   *automations.Dispatcher
}

// buildAutomations wires automations for the configured store and roles.
// Events go into the store's outbox, or with Kafka onto the events topic;
// the process role dispatches both and sends the deliveries.
func buildAutomations(ctx context.Context, cfg config.Config, roles config.Roles, store backend, price automations.UsagePricer,
	metrics *telemetry.Metrics, logger *slog.Logger) (*automationsPart, error) {
	d, err := newAutomationsDeps(cfg, store, logger)
	if err != nil {
		return nil, err
	}
	part := &automationsPart{}
	ac := cfg.Automations
	// The outbox runs in every process role, also with Kafka: an API
	// role without kafka_brokers records its events there.
	outbox := automations.NewOutbox(store, d.disp, d.worker.Wake, ac.PollInterval, logger)
	var sink automations.EventSink = outbox
	if len(cfg.BrokerList()) > 0 {
		if sink, err = part.kafkaEvents(ctx, cfg, roles, store, d, logger); err != nil {
			return nil, err
		}
	}
	if roles.Process {
		part.loops = append(part.loops, namedPart{"automations outbox", outbox}, namedPart{"automations delivery worker", d.worker})
		registerDeliveryMetrics(metrics, d.worker, store)
	}
	measure := automations.Measurer{Calls: store, Price: price}
	part.alerts = automations.NewAlerts(store, measure, d.disp, d.worker.Wake, automations.AlertsOptions{
		Interval: ac.AlertInterval, Owner: leaseOwner(), PublicURL: ac.PublicURL, Evaluate: roles.Process},
		logger.With("component", "alerts"), time.Now)
	part.loops = append(part.loops, namedPart{"alerts", part.alerts})
	part.aliasMoves = &aliasEvents{next: sink}
	sink = part.aliasMoves
	part.objects = automations.NewObjects(store, sink, time.Now)
	part.svc = automations.NewService(automations.Deps{Store: store, Objects: store, Events: sink, Box: d.box, Guard: d.guard,
		Sender: d.sender, MaxPayloadBytes: ac.MaxPayloadBytes, Wake: d.worker.Wake, Measure: measure, PublicURL: ac.PublicURL})
	return part, nil
}

// kafkaEvents is the scale-out event path: a producer for the roles
// that serve object writes, the topic's consumer in the process role.
func (p *automationsPart) kafkaEvents(ctx context.Context, cfg config.Config, roles config.Roles, store backend, d automationsDeps, logger *slog.Logger) (automations.EventSink, error) {
	topic := cfg.Automations.EventsTopic
	if cfg.Kafka.CreateTopics {
		if err := kafkaevents.EnsureTopic(ctx, cfg.Kafka, topic, logger); err != nil {
			return nil, fmt.Errorf("kafka topic %s: %w", topic, err)
		}
	}
	producer := kafkaevents.NewProducer(cfg.Kafka, topic, logger)
	p.closers = append(p.closers, producer.Close)
	if roles.Process {
		consumer := kafkaevents.NewConsumer(cfg.Kafka, topic, cfg.Kafka.Consumer.Group+"-automations", d.disp, store, d.worker.Wake, logger)
		p.loops = append(p.loops, namedPart{"automation events consumer", consumer})
	}
	return producer, nil
}

// newAutomationsDeps loads the secrets key and builds the egress client,
// the delivery worker and the dispatcher.
func newAutomationsDeps(cfg config.Config, store backend, logger *slog.Logger) (automationsDeps, error) {
	key, source, err := secretbox.LoadKey(os.Getenv, cfg.KeyFile())
	if err != nil {
		return automationsDeps{}, err
	}
	box, err := secretbox.New(key)
	if err != nil {
		return automationsDeps{}, err
	}
	logger.Info("automations: secrets key loaded", "from", source)
	ac := cfg.Automations
	nets, err := ac.Networks()
	if err != nil {
		return automationsDeps{}, err
	}
	guard := egress.NewGuard(nets)
	client := egress.NewClient(guard, egress.ClientOptions{Timeout: ac.RequestTimeout})
	sender := delivery.NewSender(client, ac.MaxResponseBytes, "Weft-Webhooks/"+Version, time.Now)
	return automationsDeps{box: box, guard: guard, sender: sender,
		worker: delivery.NewWorker(store, box, sender, workerOptions(ac), logger, time.Now),
		disp:   automations.NewDispatcher(store, box, ac.MaxPayloadBytes, time.Now)}, nil
}

// workerOptions are the delivery worker's settings. A lease outlasts two
// request timeouts, so an attempt still running when it ends is rare.
func workerOptions(ac config.Automations) delivery.Options {
	return delivery.Options{Owner: leaseOwner(), Workers: ac.Workers, Lease: 2*ac.RequestTimeout + time.Second,
		PollInterval: ac.PollInterval, DisableAfter: ac.DisableAfter,
		Policy: delivery.Policy{Initial: ac.Retry.InitialInterval, Max: ac.Retry.MaxInterval, MaxElapsed: ac.Retry.MaxElapsed}}
}

// leaseOwner names this process's leases: host, pid and a random part.
func leaseOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// parts are the automations' loops as parts of the process; the first
// closes the events producer once the loops (which shut down before it)
// have stopped.
func (p *automationsPart) parts(logger *slog.Logger) []namedPart {
	closers := p.closers
	out := []namedPart{{"automations events producer", lifecycle.NewLoop("automations events producer", logger,
		func(ctx context.Context) error { <-ctx.Done(); return nil },
		lifecycle.WithCloser(func() error {
			var err error
			for _, c := range closers {
				err = errors.Join(err, c())
			}
			return err
		}))}}
	return append(out, p.loops...)
}

// register adds the automations API.
func (p *automationsPart) register(mux *http.ServeMux, maxBytes int64, logger *slog.Logger, wrap func(http.Handler) http.Handler) {
	api.New(p.svc, maxBytes, logger).Register(mux, wrap)
}

// registerDeliveryMetrics reports this process's delivery attempts and
// the deliveries waiting in the store.
func registerDeliveryMetrics(m *telemetry.Metrics, w *delivery.Worker, store storage.DeliveryStore) {
	counter := func(name, help string, v *atomic.Int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(v.Load()) })
	}
	m.Registry.MustRegister(
		counter("weft_automations_deliveries_delivered", "Deliveries a receiver accepted (2xx), by this process.", &w.Stats.Delivered),
		counter("weft_automations_deliveries_failed", "Deliveries given up (retry window over, 410, webhook disabled or deleted), by this process.", &w.Stats.Failed),
		counter("weft_automations_delivery_retries", "Failed attempts scheduled for a retry, by this process.", &w.Stats.Retried),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "weft_automations_deliveries_pending",
			Help: "Deliveries waiting for an attempt, in the whole store."}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			n, err := store.CountDeliveries(ctx, storage.DeliveryPending)
			if err != nil {
				return math.NaN() // unknown, not zero
			}
			return float64(n)
		}))
}

// usageCost prices usage for cost alerts as include_costs does: the
// project's prices, then the defaults (with the catalog's, once built).
func (s *Server) usageCost(ctx context.Context, projectID string, usage []storage.ModelUsageBucket) (float64, error) {
	return traceapi.UsageCost(ctx, traceapi.CallExtras{Prices: s.store, Defaults: s.prices}, projectID, usage)
}
