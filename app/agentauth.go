package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/exporter/forwardexporter"
	"github.com/weftdev/weft/internal/httpapi"
)

// agentVerifier accepts any key: the agent has no key store, so the key
// travels with the records and the central Weft checks it when they
// arrive. A record it refuses (401, 403) is set aside there and counted.
type agentVerifier struct{}

func (agentVerifier) Verify(context.Context, string) (auth.Principal, error) {
	return auth.Principal{KeyID: "agent", Entity: auth.AllEntities, Role: auth.RoleMember}, nil
}

// agentCredentials gives requests without a key the configured one, and
// puts the key each request carries into its context, where the forward
// exporter takes it to send the request's records under.
type agentCredentials struct{ key string }

func (c agentCredentials) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := auth.KeyFromHeader(r.Header)
		if !ok && c.key != "" {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+c.key)
			key = c.key
		}
		next.ServeHTTP(w, r.WithContext(forwardexporter.WithKey(r.Context(), key)))
	})
}

// unary does the same for OTLP/gRPC, through the request metadata.
func (c agentCredentials) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	h := http.Header{}
	for _, k := range [...]string{"authorization", "wandb-api-key"} {
		if v := md.Get(k); len(v) > 0 {
			h.Set(k, v[0])
		}
	}
	key, ok := auth.KeyFromHeader(h)
	if !ok && c.key != "" {
		md = md.Copy()
		md.Set("authorization", "Bearer "+c.key)
		ctx = metadata.NewIncomingContext(ctx, md)
		key = c.key
	}
	return next(forwardexporter.WithKey(ctx, key), req)
}

// newUpstreamProxy passes the requests the agent does not buffer (reads,
// objects, tables, files, feedback) to the central Weft as they are:
// they are answered by the center, synchronously, and fail while it is
// away.
func newUpstreamProxy(upstream string, logger *slog.Logger) (http.Handler, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("agent.upstream: %w", err)
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = u.Host
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			logger.Warn("agent: the central Weft is unreachable for a proxied read; the client got 503 and retries; check that agent.upstream is up and reachable from the agent", "path", r.URL.Path, "err", err)
			w.Header().Set("Retry-After", "1")
			httpapi.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{
				"reason": "the central Weft is unreachable from the agent; retry later"})
		},
	}
	return p, nil
}
