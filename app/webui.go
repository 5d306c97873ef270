package app

import (
	"net/http"

	"github.com/weftdev/weft/webui"
)

// withUI serves the browser UI in front of the API unless the ui setting
// turns it off. The UI's pages and assets are GET requests on addresses
// no API route uses; everything else reaches api unchanged.
func (s *Server) withUI(api http.Handler) http.Handler {
	if !s.cfg.UI {
		return api
	}
	ui, err := webui.New(api)
	if err != nil {
		// The assets are embedded at build time; failing here means a
		// broken build, so the API still runs and the reason is logged.
		s.logger.Error("web UI unavailable (a broken build); the API serves on without it; use an official build, or set ui: false to silence this", "err", err)
		return api
	}
	return ui
}
