package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/weftdev/weft/automations/signing"
)

// Request is one attempt's POST.
type Request struct {
	ID     string // webhook-id: the delivery's id, the same on every attempt
	URL    string
	Body   []byte
	Token  string // sent as Authorization: Bearer; "" for none
	Secret string // signs the body; "" for none
}

// Response is what the receiver answered, or why nothing was answered.
type Response struct {
	Status    int // 0 when no answer arrived
	Header    http.Header
	Body      []byte // the answer's first bytes, at most the sender's cap
	Truncated bool
	Latency   time.Duration
	Err       error // set when no answer arrived
}

// Sender makes attempts.
type Sender struct {
	client    *http.Client
	maxBody   int64
	userAgent string
	now       func() time.Time
}

// NewSender sends through client (egress.NewClient: it bounds time and
// refuses internal addresses), reading at most maxBody bytes of answers.
func NewSender(client *http.Client, maxBody int64, userAgent string, now func() time.Time) *Sender {
	if now == nil {
		now = time.Now
	}
	return &Sender{client: client, maxBody: maxBody, userAgent: userAgent, now: now}
}

// Send makes one attempt. The signature's timestamp is the attempt's
// own, as Standard Webhooks expects; the id is the delivery's. The
// request's token and secret are hidden wherever the answer repeats
// them, so neither the delivery history nor a test's answer shows them.
func (s *Sender) Send(ctx context.Context, r Request) Response {
	return newRedactor(r.Token, r.Secret).response(s.send(ctx, r))
}

func (s *Sender) send(ctx context.Context, r Request) Response {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return Response{Err: fmt.Errorf("webhook URL: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.userAgent)
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	start := s.now()
	signing.Sign(req.Header, r.Secret, r.ID, start, r.Body)
	resp, err := s.client.Do(req)
	if err != nil {
		return Response{Err: describe(err), Latency: s.now().Sub(start)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.maxBody+1))
	out := Response{Status: resp.StatusCode, Header: resp.Header, Latency: s.now().Sub(start)}
	if int64(len(body)) > s.maxBody {
		body, out.Truncated = body[:s.maxBody], true
	}
	out.Body = body
	if err != nil && !out.Truncated {
		// The status arrived but the body did not: the answer counts,
		// the reason is kept.
		out.Err = describe(err)
	}
	return out
}

// describe keeps the cause a person can act on.
func describe(err error) error {
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		return fmt.Errorf("timed out: %w", err)
	}
	return err
}
