package inference

import (
	"encoding/json"
	"math"
	"strconv"
)

// inferenceAttributes is attributes.inference of a traced call.
type inferenceAttributes struct {
	Endpoint        string    `json:"endpoint"`
	Model           string    `json:"model"`
	Stream          bool      `json:"stream"`
	StatusCode      int       `json:"status_code"`
	Provider        string    `json:"provider,omitempty"`
	UpstreamModel   string    `json:"upstream_model,omitempty"`
	Attempts        []attempt `json:"attempts,omitempty"`
	TTFTMillis      float64   `json:"time_to_first_token_ms,omitempty"`
	OutputTruncated bool      `json:"output_truncated,omitempty"`
	ClientClosed    bool      `json:"client_closed,omitempty"`
	// Cache is hit or miss when the response cache was asked.
	Cache string `json:"cache,omitempty"`
	// Artifact is the alias version that answered (follow.go).
	Artifact *aliasVersion `json:"artifact,omitempty"`
	// KeyID names the API key, so a key's spend can be read back.
	KeyID string `json:"key_id,omitempty"`
}

func (ex *exchange) attributes() json.RawMessage {
	a := inferenceAttributes{Endpoint: ex.endpoint, Model: ex.modelID, Stream: ex.stream, StatusCode: ex.status,
		Attempts: ex.attempts, TTFTMillis: float64(ex.firstByte.Microseconds()) / 1000,
		OutputTruncated: ex.truncatedOutput, ClientClosed: ex.clientClosedEarly, Cache: ex.cache,
		KeyID: ex.principal.KeyID}
	if ex.version.Digest != "" {
		a.Artifact = &ex.version
	}
	if ex.served != nil {
		a.Provider, a.UpstreamModel = ex.served.Provider.Name, ex.served.Model
	}
	b := append(make([]byte, 0, 320+64*len(a.Attempts)), `{"inference":`...)
	return append(a.appendJSON(b), '}')
}

// appendJSON appends what json.Marshal writes for a, without reflection:
// every traced call carries one.
func (a *inferenceAttributes) appendJSON(b []byte) []byte {
	b = appendJSONString(append(b, `{"endpoint":`...), a.Endpoint)
	b = appendJSONString(append(b, `,"model":`...), a.Model)
	b = strconv.AppendBool(append(b, `,"stream":`...), a.Stream)
	b = strconv.AppendInt(append(b, `,"status_code":`...), int64(a.StatusCode), 10)
	if a.Provider != "" {
		b = appendJSONString(append(b, `,"provider":`...), a.Provider)
	}
	if a.UpstreamModel != "" {
		b = appendJSONString(append(b, `,"upstream_model":`...), a.UpstreamModel)
	}
	if len(a.Attempts) > 0 {
		b = append(b, `,"attempts":[`...)
		for i := range a.Attempts {
			if i > 0 {
				b = append(b, ',')
			}
			b = a.Attempts[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	if a.TTFTMillis != 0 {
		b = appendJSONFloat(append(b, `,"time_to_first_token_ms":`...), a.TTFTMillis)
	}
	if a.OutputTruncated {
		b = append(b, `,"output_truncated":true`...)
	}
	if a.ClientClosed {
		b = append(b, `,"client_closed":true`...)
	}
	if a.Cache != "" {
		b = appendJSONString(append(b, `,"cache":`...), a.Cache)
	}
	if a.Artifact != nil {
		b = a.Artifact.appendJSON(append(b, `,"artifact":`...))
	}
	if a.KeyID != "" {
		b = appendJSONString(append(b, `,"key_id":`...), a.KeyID)
	}
	return append(b, '}')
}

func (at *attempt) appendJSON(b []byte) []byte {
	b = appendJSONString(append(b, `{"provider":`...), at.Provider)
	b = appendJSONString(append(b, `,"model":`...), at.Model)
	if at.Status != 0 {
		b = strconv.AppendInt(append(b, `,"status":`...), int64(at.Status), 10)
	}
	if at.Error != "" {
		b = appendJSONString(append(b, `,"error":`...), at.Error)
	}
	b = appendJSONFloat(append(b, `,"duration_ms":`...), at.DurationMS)
	return append(b, '}')
}

// appendJSONFloat writes f as json.Marshal does: plain notation, or
// exponent notation with at least one exponent digit for very small and
// very large numbers. Durations are never NaN or infinite; those are
// written as 0 rather than as invalid JSON.
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-09 -> e-9
		b = b[:n-1]
	}
	return b
}
