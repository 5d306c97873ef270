package otlpreceiver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/receiver/otelmap"
	"github.com/weftdev/weft/storage"
)

// failKind is a transport-neutral error class; HTTP and gRPC each map it
// to their status code.
type failKind int

const (
	failBadRequest      failKind = iota // 400, INVALID_ARGUMENT
	failUnauthenticated                 // 401, UNAUTHENTICATED
	failForbidden                       // 403, PERMISSION_DENIED
	failTooLarge                        // 413, RESOURCE_EXHAUSTED without retry
	failUnsupported                     // 415, INVALID_ARGUMENT
	failOverloaded                      // 429, RESOURCE_EXHAUSTED with RetryInfo
	failUnavailable                     // 503, UNAVAILABLE with RetryInfo
	failMethod                          // 405 (HTTP only)
)

// failure is an error answered to the client. msg is safe to show.
type failure struct {
	kind failKind
	msg  string
	err  error
}

func (f *failure) Error() string {
	if f.err != nil {
		return f.msg + ": " + f.err.Error()
	}
	return f.msg
}

func (f *failure) Unwrap() error { return f.err }

func fail(kind failKind, format string, args ...any) *failure {
	return &failure{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// outcome is a successful export: spans not mapped are reported back.
type outcome struct {
	rejected int
	message  string
}

// ingester is the part shared by the HTTP and gRPC transports.
type ingester struct {
	cfg      Config
	mapper   *otelmap.Mapper
	verifier auth.Verifier
	sub      consumer.Calls
	// traces, when set, takes the spans as OTLP instead of sub taking
	// them as calls (see NewForwardingHTTPHandler).
	traces consumer.Traces
	logger *slog.Logger
	// accepted and refused count spans (otelcol_receiver_*_spans).
	accepted, refused prometheus.Counter
}

func newIngester(cfg Config, v auth.Verifier, sub consumer.Calls, set telemetry.Settings, transport string) *ingester {
	cfg = cfg.withDefaults()
	in := &ingester{
		cfg:      cfg,
		mapper:   otelmap.NewMapper(otelmap.Options{MaxAttributeValueBytes: cfg.MaxAttributeValueBytes}),
		verifier: v,
		sub:      sub,
		logger:   set.Logger,
		accepted: prometheus.NewCounter(prometheus.CounterOpts{Name: "unregistered"}),
		refused:  prometheus.NewCounter(prometheus.CounterOpts{Name: "unregistered"}),
	}
	if in.logger == nil {
		in.logger = slog.New(slog.DiscardHandler)
	}
	if m := set.Metrics; m != nil {
		in.accepted = m.ReceiverAcceptedSpans.WithLabelValues(ReceiverType, transport)
		in.refused = m.ReceiverRefusedSpans.WithLabelValues(ReceiverType, transport)
	}
	return in
}

// ReceiverType names this receiver in metrics and logs.
const ReceiverType = "otlp"

// count records one request's outcome in the span counters.
func (in *ingester) count(spans int, out outcome, err error) {
	if err != nil {
		in.refused.Add(float64(spans))
		return
	}
	in.refused.Add(float64(out.rejected))
	in.accepted.Add(float64(spans - out.rejected))
}

// authenticate turns the request credentials into a principal.
func (in *ingester) authenticate(ctx context.Context, h http.Header) (auth.Principal, error) {
	key, ok := auth.KeyFromHeader(h)
	if !ok {
		return auth.Principal{}, fail(failUnauthenticated,
			"missing API key: send the header wandb-api-key: <key> or Authorization: Basic base64(api:<key>)")
	}
	p, err := in.verifier.Verify(ctx, key)
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, auth.ErrUnauthenticated):
		return auth.Principal{}, &failure{kind: failUnauthenticated, msg: "invalid API key", err: err}
	}
	in.logger.WarnContext(ctx, "otlp: cannot verify an API key (the key store is unavailable); the client got 503 and retries; if it repeats, check the store", slog.Any("error", err))
	return auth.Principal{}, &failure{kind: failUnavailable, msg: "cannot verify the API key now; retry later", err: err}
}

// export maps, authorises and submits one request, and counts its spans.
func (in *ingester) export(ctx context.Context, p auth.Principal, headerProject string, td ptrace.Traces) (outcome, error) {
	out, err := in.exportSpans(ctx, p, headerProject, td)
	in.count(td.SpanCount(), out, err)
	return out, err
}

func (in *ingester) exportSpans(ctx context.Context, p auth.Principal, headerProject string, td ptrace.Traces) (outcome, error) {
	if n := td.SpanCount(); n > in.cfg.MaxSpansPerRequest {
		return outcome{}, fail(failTooLarge,
			"request has %d spans, more than the limit of %d: lower the exporter's batch size (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)",
			n, in.cfg.MaxSpansPerRequest)
	}
	if in.traces != nil {
		return in.forward(ctx, p, headerProject, td)
	}
	res := in.mapper.Map(td, otelmap.Input{ProjectID: strings.TrimSpace(headerProject), WBUserID: p.UserID})
	if len(res.Projects) == 0 && res.NoProject > 0 {
		return outcome{}, fail(failBadRequest, "%s", otelmap.ReasonNoProject)
	}
	for _, project := range res.Projects {
		if err := p.Authorize(project, auth.Write); err != nil {
			return outcome{}, authFailure(err)
		}
	}
	if len(res.Parts) > 0 {
		ops := make([]storage.CallOp, len(res.Parts))
		for i := range res.Parts {
			ops[i].Part = &res.Parts[i]
		}
		if _, err := in.sub.ConsumeCalls(ctx, ops); err != nil {
			return outcome{}, in.submitFailure(ctx, err)
		}
	}
	return outcome{rejected: len(res.Rejected), message: otelmap.RejectionMessage(res.Rejected)}, nil
}

func authFailure(err error) *failure {
	switch {
	case errors.Is(err, auth.ErrBadProjectID):
		return &failure{kind: failBadRequest, msg: err.Error()}
	case errors.Is(err, auth.ErrUnauthenticated):
		return &failure{kind: failUnauthenticated, msg: err.Error()}
	}
	return &failure{kind: failForbidden, msg: err.Error()}
}

// submitFailure classifies a pipeline error. Unknown errors are answered
// as retryable: the pipeline failed the batch, nothing was acknowledged,
// and a retry is the client's best move.
func (in *ingester) submitFailure(ctx context.Context, err error) *failure {
	switch consumer.Classify(err) {
	case consumer.KindOverloaded:
		return &failure{kind: failOverloaded, msg: "ingest queue is full; retry later", err: err}
	case consumer.KindInvalid:
		return &failure{kind: failBadRequest, msg: err.Error()}
	case consumer.KindTooLarge:
		return &failure{kind: failTooLarge, msg: err.Error()}
	case consumer.KindUnavailable:
		msg := "storage is unavailable; retry later"
		if errors.Is(err, consumer.ErrStopped) {
			msg = "server is shutting down; retry later"
		}
		return &failure{kind: failUnavailable, msg: msg, err: err}
	}
	in.logger.ErrorContext(ctx, "otlp: submitting calls failed unexpectedly; the client got 503 and retries; if it repeats, check the store, otherwise report it as a bug with this line", slog.Any("error", err))
	return &failure{kind: failUnavailable, msg: "calls could not be stored; retry later", err: err}
}

// asFailure classifies any error from export or decoding.
func asFailure(err error) *failure {
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	return &failure{kind: failUnavailable, msg: "internal error; retry later", err: err}
}
