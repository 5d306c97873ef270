// Package webui serves Weft's browser UI: static ES modules, a stylesheet
// and one HTML shell, embedded in the binary so a plain `go build` yields
// a working UI and no request leaves the machine. The UI reads through
// the same authenticated API as every client; this package holds no data
// and no keys.
package webui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// Handler serves the UI's GET and HEAD requests and hands every other
// request to the API handler it wraps.
type Handler struct {
	api    http.Handler
	static http.Handler
	shell  []byte
}

// New wraps api with the UI.
func New(api http.Handler) (*Handler, error) {
	root, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	shell, err := fs.ReadFile(root, "index.html")
	if err != nil {
		return nil, err
	}
	return &Handler{api: api, static: http.StripPrefix(AssetPrefix, http.FileServerFS(filesOnly{root})), shell: shell}, nil
}

// filesOnly serves files and nothing else: a directory is not there, so
// the file server answers 404 rather than listing it (or redirecting to
// its listing).
type filesOnly struct{ fs.FS }

func (f filesOnly) Open(name string) (fs.File, error) {
	file, err := f.FS.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := file.Stat(); err != nil || st.IsDir() {
		_ = file.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return file, nil
}

// AssetPrefix is where the scripts and styles are served.
const AssetPrefix = "/ui/"

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.api.ServeHTTP(w, r)
		return
	}
	switch {
	case strings.HasPrefix(r.URL.Path, AssetPrefix) && r.URL.Path != AssetPrefix+"index.html":
		setHeaders(w)
		w.Header().Set("Cache-Control", "no-cache")
		h.static.ServeHTTP(w, r)
	case IsPage(r.URL.Path):
		setHeaders(w)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(h.shell)
	default:
		h.api.ServeHTTP(w, r)
	}
}

// setHeaders keeps the UI's scripts, styles and requests on weft's own
// origin: the API key lives in the page, so nothing foreign may run there
// or be sent anywhere, and no other site may frame it.
func setHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// ContentSecurityPolicy allows only weft's own origin.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
