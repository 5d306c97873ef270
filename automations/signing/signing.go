// Package signing signs webhook deliveries and verifies them: the
// X-Service-Signature header (base64 of HMAC-SHA256 over the exact body,
// keyed with the webhook's secret, as the seed's platform sends it) and
// the Standard Webhooks headers webhook-id, webhook-timestamp and
// webhook-signature ("v1," and base64 of HMAC-SHA256 over
// "id.timestamp.body"), which add replay protection with the same secret.
//
// It imports nothing of the project.
package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names.
const (
	HeaderServiceSignature = "X-Service-Signature"
	HeaderID               = "webhook-id"
	HeaderTimestamp        = "webhook-timestamp"
	HeaderSignature        = "webhook-signature"
)

// standardPrefix marks a Standard Webhooks secret: the key is the base64
// text after it, decoded.
const standardPrefix = "whsec_"

// ServiceSignature is the X-Service-Signature value for body.
func ServiceSignature(secret string, body []byte) string {
	return base64.StdEncoding.EncodeToString(mac([]byte(secret), body))
}

// StandardSignature is the webhook-signature value ("v1,<base64>") for
// one message. A secret of the form whsec_<base64> is keyed with the
// decoded bytes, as Standard Webhooks libraries do; any other secret
// with its own bytes, so a plain secret works for both headers.
func StandardSignature(secret, id string, ts time.Time, body []byte) string {
	signed := make([]byte, 0, len(id)+len(body)+24)
	signed = append(signed, id...)
	signed = append(signed, '.')
	signed = strconv.AppendInt(signed, ts.Unix(), 10)
	signed = append(signed, '.')
	signed = append(signed, body...)
	return "v1," + base64.StdEncoding.EncodeToString(mac(standardKey(secret), signed))
}

func standardKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, standardPrefix); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return key
		}
	}
	return []byte(secret)
}

func mac(key, msg []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(msg)
	return h.Sum(nil)
}

// Sign sets the delivery headers on h: webhook-id and webhook-timestamp
// always, and with a secret X-Service-Signature and webhook-signature.
func Sign(h http.Header, secret, id string, ts time.Time, body []byte) {
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	if secret == "" {
		return
	}
	h.Set(HeaderServiceSignature, ServiceSignature(secret, body))
	h.Set(HeaderSignature, StandardSignature(secret, id, ts, body))
}

// Verification errors.
var (
	ErrMissingHeader = errors.New("missing signature header")
	ErrBadSignature  = errors.New("no signature matches")
	ErrTooOld        = errors.New("message timestamp too old")
	ErrTooNew        = errors.New("message timestamp too new")
)

// VerifyService checks an X-Service-Signature value in constant time.
func VerifyService(secret string, body []byte, signature string) error {
	if signature == "" {
		return ErrMissingHeader
	}
	if !hmac.Equal([]byte(ServiceSignature(secret, body)), []byte(signature)) {
		return ErrBadSignature
	}
	return nil
}

// VerifyStandard checks the Standard Webhooks headers as a receiver
// should: a timestamp within tolerance of now either way, and any one of
// the space-separated v1 signatures matching.
func VerifyStandard(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrMissingHeader
	}
	sec, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("%s %q: %w", HeaderTimestamp, tsText, err)
	}
	ts := time.Unix(sec, 0)
	switch {
	case now.Sub(ts) > tolerance:
		return ErrTooOld
	case ts.Sub(now) > tolerance:
		return ErrTooNew
	}
	want := []byte(StandardSignature(secret, id, ts, body))
	for _, sig := range strings.Fields(sigs) {
		if hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return ErrBadSignature
}
