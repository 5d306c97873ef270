package otlpreceiver

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// httpCode and grpcCode map a failure kind per the OTLP specification.
func (k failKind) httpCode() int {
	switch k {
	case failBadRequest:
		return http.StatusBadRequest
	case failUnauthenticated:
		return http.StatusUnauthorized
	case failForbidden:
		return http.StatusForbidden
	case failTooLarge:
		return http.StatusRequestEntityTooLarge
	case failUnsupported:
		return http.StatusUnsupportedMediaType
	case failOverloaded:
		return http.StatusTooManyRequests
	case failMethod:
		return http.StatusMethodNotAllowed
	}
	return http.StatusServiceUnavailable
}

func (k failKind) grpcCode() codes.Code {
	switch k {
	case failBadRequest, failUnsupported:
		return codes.InvalidArgument
	case failUnauthenticated:
		return codes.Unauthenticated
	case failForbidden:
		return codes.PermissionDenied
	case failTooLarge, failOverloaded:
		return codes.ResourceExhausted
	case failMethod:
		return codes.Unimplemented
	}
	return codes.Unavailable
}

// retryable kinds carry a retry delay; the OTLP exporters retry
// RESOURCE_EXHAUSTED only when RetryInfo is present.
func (k failKind) retryable() bool { return k == failOverloaded || k == failUnavailable }

// grpcStatus builds the google.rpc.Status of a failure.
func (f *failure) grpcStatus(retryAfter time.Duration) *status.Status {
	// Decoder errors may quote the offending bytes; a Status message must
	// be UTF-8 or it cannot be marshalled.
	st := status.New(f.kind.grpcCode(), strings.ToValidUTF8(f.msg, "\uFFFD"))
	if !f.kind.retryable() || retryAfter <= 0 {
		return st
	}
	if d, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(retryAfter)}); err == nil {
		return d
	}
	return st
}

// writeFailure answers a failure as a google.rpc.Status in enc, with
// Retry-After on retryable failures.
func writeFailure(w http.ResponseWriter, enc encoding, f *failure, retryAfter time.Duration) {
	code := f.kind.httpCode()
	if f.kind.retryable() && retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retryAfter.Seconds()))))
	}
	st := f.grpcStatus(retryAfter).Proto()
	var body []byte
	var err error
	if enc == encJSON {
		body, err = protojson.Marshal(st)
	} else {
		body, err = proto.Marshal(st)
	}
	if err != nil {
		body = nil // cannot happen with a UTF-8 message; the code still tells
	}
	writeBody(w, enc, code, body)
}

// writeExportResponse answers 200 with an ExportTraceServiceResponse,
// carrying partial_success when spans were rejected.
func writeExportResponse(w http.ResponseWriter, enc encoding, out outcome) {
	resp := ptraceotlp.NewExportResponse()
	if out.rejected > 0 {
		ps := resp.PartialSuccess()
		ps.SetRejectedSpans(int64(out.rejected))
		ps.SetErrorMessage(strings.ToValidUTF8(out.message, "\uFFFD"))
	}
	var body []byte
	var err error
	if enc == encJSON {
		body, err = resp.MarshalJSON()
	} else {
		body, err = resp.MarshalProto()
	}
	if err != nil {
		body = nil
	}
	writeBody(w, enc, http.StatusOK, body)
}

func writeBody(w http.ResponseWriter, enc encoding, code int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", enc.contentType())
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body) // the client may be gone; nothing more to do
}
