package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/weftdev/weft/automations"
	"github.com/weftdev/weft/automations/api"
	"github.com/weftdev/weft/automations/delivery"
	"github.com/weftdev/weft/automations/egress"
	"github.com/weftdev/weft/automations/secretbox"
	"github.com/weftdev/weft/config"
	"github.com/weftdev/weft/storage"
)

// automationsPart is webhook automations in this process: the service
// behind the API, the object store whose alias writes record events,
// and, in a process that delivers, the loops that dispatch events and
// send deliveries.
type automationsPart struct {
	svc     *automations.Service
	objects storage.ObjectStore
	worker  *delivery.Worker
	loops   []func(context.Context) error
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// buildAutomations wires automations for the configured store and roles.
// A store without automations support leaves objects unwrapped and the
// routes unregistered.
func buildAutomations(cfg config.Config, roles config.Roles, store backend, logger *slog.Logger) (*automationsPart, error) {
	part := &automationsPart{objects: store}
	ab, ok := store.(storage.AutomationsBackend)
	if !ok {
		logger.Info("automations: not available on this store")
		return part, nil
	}
	key, source, err := secretbox.LoadKey(os.Getenv, cfg.KeyFile())
	if err != nil {
		return nil, err
	}
	box, err := secretbox.New(key)
	if err != nil {
		return nil, err
	}
	logger.Info("automations: secrets key loaded", "from", source)
	ac := cfg.Automations
	nets, err := ac.Networks()
	if err != nil {
		return nil, err
	}
	guard := egress.NewGuard(nets)
	client := egress.NewClient(guard, egress.ClientOptions{Timeout: ac.RequestTimeout})
	sender := delivery.NewSender(client, ac.MaxResponseBytes, "Weft-Webhooks/"+Version, time.Now)
	part.worker = delivery.NewWorker(ab, box, sender, workerOptions(ac), logger, time.Now)
	disp := automations.NewDispatcher(ab, box, ac.MaxPayloadBytes, time.Now)
	outbox := automations.NewOutbox(ab, disp, part.worker.Wake, ac.PollInterval, logger)
	part.objects = automations.NewObjects(store, outbox, time.Now)
	part.svc = automations.NewService(automations.Deps{Store: ab, Objects: store, Events: outbox, Box: box, Guard: guard,
		Sender: sender, MaxPayloadBytes: ac.MaxPayloadBytes, Wake: part.worker.Wake})
	if roles.Process {
		part.loops = append(part.loops, outbox.Run, part.worker.Run)
	}
	return part, nil
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

// start runs the dispatch and delivery loops until shutdown.
func (p *automationsPart) start(logger *slog.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	for _, loop := range p.loops {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if err := loop(ctx); err != nil && !errors.Is(err, context.Canceled) {
				logger.Error("automations loop stopped", "err", err)
			}
		}()
	}
}

// shutdown stops the loops; attempts in flight finish first, within ctx.
func (p *automationsPart) shutdown(ctx context.Context) error {
	if p.stop == nil {
		return nil
	}
	p.stop()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("automations: deliveries in flight did not finish within shutdown_timeout: %w", ctx.Err())
	}
}

// register adds the automations API, when this store has it.
func (p *automationsPart) register(mux *http.ServeMux, maxBytes int64, logger *slog.Logger, wrap func(http.Handler) http.Handler) {
	if p.svc != nil {
		api.New(p.svc, maxBytes, logger).Register(mux, wrap)
	}
}
