package app

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/httpapi"
)

// apiMetricsHandler is GET /metrics on the API listener. Without an API
// key it serves weft's own metrics, for any scraper; the trace metrics
// (weft_app_*) name every tenant's projects, so they are added only for
// an instance-wide admin key. A key that is not valid is 401, and a
// valid key without that role 403, so a scraper given the wrong key says
// so rather than silently missing series.
func (s *Server) apiMetricsHandler() http.Handler {
	own := s.metrics.Handler()
	if s.write.traceMetrics == nil {
		return own
	}
	all := s.privateMetricsHandler()
	verifier := auth.StoreVerifier{Store: s.keys}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, present := auth.KeyFromHeader(r.Header)
		if !present && r.Header.Get("Authorization") == "" {
			own.ServeHTTP(w, r)
			return
		}
		p, err := verifier.Verify(r.Context(), secret)
		if err != nil {
			httpapi.WriteError(w, r, s.logger, err)
			return
		}
		if p.Entity != auth.AllEntities || p.Role != auth.RoleAdmin {
			httpapi.WriteError(w, r, s.logger, fmt.Errorf("%w: trace metrics name every tenant's projects and need an instance-wide admin key; scrape without a key for weft's own metrics, or use metrics_listen", auth.ErrForbidden))
			return
		}
		all.ServeHTTP(w, r)
	})
}

// privateMetricsHandler serves weft's own metrics and the trace metrics
// together: on metrics_listen (a listener of its own, kept private) and
// to an admin scrape of the API listener.
func (s *Server) privateMetricsHandler() http.Handler {
	if s.write.traceMetrics == nil {
		return s.metrics.Handler()
	}
	g := prometheus.Gatherers{s.metrics.Registry, s.write.traceMetrics.Gatherer()}
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{Registry: s.metrics.Registry})
}
