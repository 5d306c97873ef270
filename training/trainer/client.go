package trainer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/weftdev/weft/training/protocol"
)

// Client speaks the worker protocol to one weft.
type Client struct {
	base string
	key  string
	http *http.Client
}

// NewClient talks to the weft at base (http://host:6345) with a worker key.
func NewClient(base, key string, hc *http.Client) *Client {
	return &Client{base: strings.TrimRight(base, "/"), key: key, http: hc}
}

// APIError is an answer other than success.
type APIError struct {
	Status int
	Detail string
}

func (e *APIError) Error() string { return fmt.Sprintf("weft answered %d: %s", e.Status, e.Detail) }

// LeaseLost reports a refusal because the lease no longer holds the job
// (or the job ended): the worker must stop working on it.
func LeaseLost(err error) bool {
	e, ok := err.(*APIError)
	return ok && e.Status == http.StatusConflict
}

func (c *Client) do(ctx context.Context, method, path, lease string, body io.Reader, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	if lease != "" {
		req.Header.Set(protocol.LeaseHeader, lease)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Detail json.RawMessage `json:"detail"`
		}
		_ = json.Unmarshal(raw, &e)
		return resp.StatusCode, &APIError{Status: resp.StatusCode, Detail: strings.Trim(string(e.Detail), `"`)}
	}
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("decoding weft's answer to %s: %w", path, err)
		}
	}
	return resp.StatusCode, nil
}

func (c *Client) post(ctx context.Context, path, lease string, in, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = c.do(ctx, http.MethodPost, path, lease, bytes.NewReader(raw), out)
	return err
}

// Lease waits up to wait for a job; nil when none came.
func (c *Client) Lease(ctx context.Context, worker string, wait time.Duration) (*protocol.Lease, error) {
	raw, _ := json.Marshal(protocol.LeaseRequest{Worker: worker, WaitSeconds: wait.Seconds()}) // plain values
	var l protocol.Lease
	status, err := c.do(ctx, http.MethodPost, "/v1/worker/lease", "", bytes.NewReader(raw), &l)
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return &l, nil
}

func jobPath(jobID, rest string) string { return "/v1/worker/jobs/" + url.PathEscape(jobID) + rest }

// Heartbeat extends the lease.
func (c *Client) Heartbeat(ctx context.Context, jobID, lease string) (protocol.HeartbeatAnswer, error) {
	var a protocol.HeartbeatAnswer
	return a, c.post(ctx, jobPath(jobID, "/heartbeat"), lease, struct{}{}, &a)
}

// Events appends events numbered from seq.
func (c *Client) Events(ctx context.Context, jobID, lease string, seq int64, evs []protocol.Event) error {
	return c.post(ctx, jobPath(jobID, "/events"), lease, protocol.Events{Seq: seq, Events: evs}, nil)
}

// Upload stores a file of the checkpoint under name.
func (c *Client) Upload(ctx context.Context, jobID, lease, name, path string) (protocol.Uploaded, error) {
	f, err := os.Open(path)
	if err != nil {
		return protocol.Uploaded{}, err
	}
	defer f.Close()
	var up protocol.Uploaded
	escaped := strings.Split(name, "/")
	for i, part := range escaped {
		escaped[i] = url.PathEscape(part)
	}
	_, err = c.do(ctx, http.MethodPut, jobPath(jobID, "/files/"+strings.Join(escaped, "/")), lease, f, &up)
	return up, err
}

// Register registers the uploaded files as the checkpoint.
func (c *Client) Register(ctx context.Context, jobID, lease string, reg protocol.CheckpointRegistration) (protocol.Checkpoint, error) {
	var cp protocol.Checkpoint
	return cp, c.post(ctx, jobPath(jobID, "/checkpoints"), lease, reg, &cp)
}

// Finish ends the job.
func (c *Client) Finish(ctx context.Context, jobID, lease string, f protocol.Finish) error {
	return c.post(ctx, jobPath(jobID, "/finish"), lease, f, nil)
}

// Download writes a stored file of the job's project to dst.
func (c *Client) Download(ctx context.Context, jobID, lease, digest, dst string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+jobPath(jobID, "/files/"+url.PathEscape(digest)), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set(protocol.LeaseHeader, lease)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return &APIError{Status: resp.StatusCode, Detail: string(msg)}
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
