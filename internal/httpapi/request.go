package httpapi

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/weftdev/weft/auth"
	"github.com/weftdev/weft/internal/jsontext"
	"github.com/weftdev/weft/wire"
)

// ReadBody reads the whole request body, decompressing gzip, and refuses
// more than limit bytes (after decompression) with 413. A body the
// in-flight budget stopped fails with its *LimitError (429 or 408).
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	var src io.Reader = r.Body
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		var le *LimitError
		if errors.As(err, &le) {
			return nil, le
		}
		if err != nil {
			return nil, Errorf(http.StatusBadRequest, "Content-Encoding gzip: body is not valid gzip: "+err.Error())
		}
		defer zr.Close()
		src = zr
	default:
		return nil, Errorf(http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Encoding %q is not supported; send gzip or no encoding", enc))
	}
	body, err := io.ReadAll(io.LimitReader(src, limit+1))
	if err != nil {
		var mbe *http.MaxBytesError
		var le *LimitError
		switch {
		case errors.As(err, &le):
			return nil, le
		case errors.As(err, &mbe):
			return nil, tooLarge(limit)
		}
		return nil, Errorf(http.StatusBadRequest, "reading request body: "+err.Error())
	}
	if int64(len(body)) > limit {
		return nil, tooLarge(limit)
	}
	return body, nil
}

// ReadJSON is ReadBody for a JSON body, made safe to store: invalid UTF-8
// is refused with 400 naming the field, and lone surrogate escapes become
// \ufffd (see jsontext.Sanitize).
func ReadJSON(r *http.Request, limit int64) ([]byte, error) {
	body, err := ReadBody(r, limit)
	if err != nil {
		return nil, err
	}
	body, err = jsontext.Sanitize(body)
	var ue *jsontext.InvalidUTF8Error
	if errors.As(err, &ue) {
		return nil, &wire.FieldError{Field: ue.Path, Msg: ue.Error(), Schema: wire.SchemaJSON}
	}
	return body, err
}

func tooLarge(limit int64) error {
	return Errorf(http.StatusRequestEntityTooLarge, fmt.Sprintf("Request too large: the body exceeds %d bytes (max_request_bytes); split the batch", limit))
}

type principalKey struct{}

// PrincipalFrom returns the authenticated caller of a request.
func PrincipalFrom(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	return p, ok
}

// WithPrincipal stores p in ctx (for tests and middleware).
func WithPrincipal(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// Authenticate wraps next so it runs only for requests with a valid key.
func Authenticate(v auth.Verifier, logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := auth.KeyFromHeader(r.Header)
		if !ok {
			WriteError(w, r, logger, fmt.Errorf("%w: send it as 'Authorization: Bearer KEY', 'Authorization: Basic base64(api:KEY)' or 'wandb-api-key: KEY'", auth.ErrUnauthenticated))
			return
		}
		p, err := v.Verify(r.Context(), key)
		if err != nil {
			WriteError(w, r, logger, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// Authorize checks the request's principal against a project.
func Authorize(ctx context.Context, projectID string, need auth.Access) (auth.Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	if projectID == "" {
		return p, wire.Missing("project_id", " (form entity/project)")
	}
	return p, p.Authorize(projectID, need)
}

// BodyHandler answers a request from its decoded-enough body: a value to
// send as JSON, or an error to map to a status.
type BodyHandler func(r *http.Request, body []byte) (any, error)

// JSON serves h: it reads the bounded body with ReadJSON, calls h, and answers 200 with
// the result as JSON or the error in the Weave shape.
func JSON(logger *slog.Logger, maxBytes int64, h BodyHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := ReadJSON(r, maxBytes)
		if err == nil {
			var res any
			if res, err = h(r, body); err == nil {
				WriteJSON(w, http.StatusOK, res)
				return
			}
		}
		WriteError(w, r, logger, err)
	})
}
