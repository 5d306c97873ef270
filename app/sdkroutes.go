package app

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/graphql"
)

// TracesPrefix is where the Weave SDKs look for the trace API when only
// WANDB_BASE_URL is set: they derive <base>/traces (and, for the W&B API,
// <base>/graphql). Every trace route is served there as well as at the
// root.
const TracesPrefix = "/traces"

// registerGraphQL serves the W&B API subset the SDKs query at init.
func registerGraphQL(mux *http.ServeMux, v auth.Verifier, logger *slog.Logger) {
	mux.Handle("POST /graphql", graphql.NewHandler(graphql.WandbSchema(), v, logger))
}

// underTraces serves next under TracesPrefix too, by removing the prefix
// before routing (as http.StripPrefix does, but keeping paths without
// it): /traces/call/upsert_batch is /call/upsert_batch.
func underTraces(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, TracesPrefix)
		if !ok || (rest != "" && rest[0] != '/') {
			next.ServeHTTP(w, r)
			return
		}
		r2 := new(http.Request)
		*r2 = *r
		u := *r.URL
		u.Path = "/" + strings.TrimPrefix(rest, "/")
		u.RawPath = ""
		if raw, ok := strings.CutPrefix(r.URL.RawPath, TracesPrefix); ok {
			u.RawPath = "/" + strings.TrimPrefix(raw, "/")
		}
		r2.URL = &u
		next.ServeHTTP(w, r2)
	})
}
