package delivery

import (
	"net/http"
	"strings"
)

// Redacted stands in for a secret's value in what a receiver answered.
const Redacted = "****"

// redactor hides the secret values a request carried (the access token
// sent as Authorization: Bearer, the signing secret a payload may hold)
// in the answer: a receiver that reflects its request would otherwise
// show them to whoever reads the delivery history or a test's answer.
type redactor struct{ secrets []string }

func newRedactor(secrets ...string) redactor {
	var r redactor
	for _, s := range secrets {
		if s != "" {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// text replaces every secret in s. cut says s was cut short: a secret's
// first bytes at its end are hidden too.
func (r redactor) text(s string, cut bool) string {
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, Redacted)
	}
	if cut {
		for _, secret := range r.secrets {
			for n := len(secret) - 1; n > 0; n-- {
				if strings.HasSuffix(s, secret[:n]) {
					s = s[:len(s)-n] + Redacted
					break
				}
			}
		}
	}
	return s
}

// header is h with secrets hidden; an Authorization header keeps only
// its scheme, whatever it holds.
func (r redactor) header(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		out[k] = make([]string, len(vs))
		for i, v := range vs {
			if k == "Authorization" || k == "Proxy-Authorization" {
				scheme, _, found := strings.Cut(v, " ")
				if v = Redacted; found {
					v = scheme + " " + Redacted
				}
			}
			out[k][i] = r.text(v, false)
		}
	}
	return out
}

// response hides the secrets in everything an answer carries.
func (r redactor) response(resp Response) Response {
	if resp.Header != nil {
		resp.Header = r.header(resp.Header)
	}
	if len(resp.Body) > 0 {
		resp.Body = []byte(r.text(string(resp.Body), resp.Truncated))
	}
	if resp.Err != nil {
		if msg := r.text(resp.Err.Error(), false); msg != resp.Err.Error() {
			resp.Err = &redactedError{msg: msg, err: resp.Err}
		}
	}
	return resp
}

// redactedError is an error whose message had a secret: it says the
// redacted message and still unwraps to the cause.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
