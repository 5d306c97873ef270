package app

import (
	"net"
	"net/http"

	"github.com/weftdev/weft/internal/httpapi"
)

// registerService adds the endpoints that need no key.
func registerService(mux *http.ServeMux) {
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"version": Version})
	})
	mux.HandleFunc("GET /server_info", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{
			// No Weave client is too old for this server.
			"min_required_weave_python_version": "0.0.0",
			"trace_server_version":              WeaveProtocolVersion,
		})
	})
	// geolocate is answered locally: weft never calls out to the network,
	// so it reports the caller's address and no location.
	mux.HandleFunc("GET /geolocate", func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{
			"ip": host, "country_code": nil, "region": nil, "city": nil, "source": "local",
		})
	})
}
