package otlpreceiver

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/grpc"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/consumer"
	"github.com/weftdev/weft/internal/httpapi"
	"github.com/weftdev/weft/internal/telemetry"
	"github.com/weftdev/weft/receiver/otelmap"
)

// NewForwardingHTTPHandler serves OTLP/HTTP as NewHTTPHandler does, but
// hands the spans on as OTLP (to next) instead of mapping them to calls:
// the agent role checks them here and leaves the mapping to the central
// Weft it forwards them to. Spans that can never become calls (no trace
// id, span id or start time, no project) are refused here, in
// partial_success, as the center would refuse them.
func NewForwardingHTTPHandler(cfg Config, v auth.Verifier, next consumer.Traces, set telemetry.Settings) http.Handler {
	in := newIngester(cfg, v, nil, set, "http")
	in.traces = next
	return newHTTPHandler(in)
}

// NewForwardingGRPCServer is NewGRPCServer handing spans on as OTLP, as
// NewForwardingHTTPHandler does.
func NewForwardingGRPCServer(cfg Config, v auth.Verifier, next consumer.Traces, set telemetry.Settings, inflight *httpapi.Inflight,
	opts ...grpc.ServerOption) (*grpc.Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	in := newIngester(cfg, v, nil, set, "grpc")
	in.traces = next
	return newGRPCServer(in, inflight, opts...), nil
}

// forward checks td's projects and spans, drops the spans that can never
// be mapped, and hands the rest on.
func (in *ingester) forward(ctx context.Context, p auth.Principal, headerProject string, td ptrace.Traces) (outcome, error) {
	headerProject = strings.TrimSpace(headerProject)
	rejected, noProject, err := dropUnmappable(td, headerProject, p)
	if err != nil {
		return outcome{}, err
	}
	if td.SpanCount() == 0 && noProject > 0 {
		return outcome{}, fail(failBadRequest, "%s", otelmap.ReasonNoProject)
	}
	if td.SpanCount() > 0 {
		if err := in.traces.ConsumeTraces(ctx, headerProject, td); err != nil {
			return outcome{}, in.submitFailure(ctx, err)
		}
	}
	return outcome{rejected: len(rejected), message: otelmap.RejectionMessage(rejected)}, nil
}

// dropUnmappable removes from td the spans the mapper would reject
// without looking into them, and checks that p may write each project.
func dropUnmappable(td ptrace.Traces, headerProject string, p auth.Principal) (rejected []otelmap.Rejection, noProject int, err error) {
	rss := td.ResourceSpans()
	for ri := range rss.Len() {
		project := headerProject
		if project == "" {
			project = otelmap.ProjectOf(rss.At(ri).Resource())
		}
		if project != "" {
			if err := p.Authorize(project, auth.Write); err != nil {
				return nil, 0, authFailure(err)
			}
		}
		sss := rss.At(ri).ScopeSpans()
		for si := range sss.Len() {
			idx := 0
			sss.At(si).Spans().RemoveIf(func(span ptrace.Span) bool {
				defer func() { idx++ }()
				reason := unmappable(span, project)
				if reason == "" {
					return false
				}
				if project == "" {
					noProject++
				}
				rejected = append(rejected, otelmap.Rejection{Resource: ri, Scope: si, Span: idx, Name: span.Name(),
					TraceID: span.TraceID().String(), SpanID: span.SpanID().String(), Reason: reason})
				return true
			})
		}
	}
	return rejected, noProject, nil
}

// unmappable is why the mapper would reject span outright, or "".
func unmappable(span ptrace.Span, project string) string {
	if project == "" {
		return otelmap.ReasonNoProject
	}
	if err := otelmap.CheckSpan(span); err != nil {
		return err.Error()
	}
	return ""
}
