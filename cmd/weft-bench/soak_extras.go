package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weftdev/weft/training/protocol"
)

// inference sends chat requests through the center's gateway to the
// local upstream, plain and streamed in turn; a stream must end with
// [DONE].
func (s *soak) inference(ctx context.Context, stop <-chan struct{}, pace *pacer) {
	rng := rand.New(rand.NewPCG(s.nonce, 11))
	for i := 0; ; i++ {
		if !pace.wait(ctx, stop, 1) {
			return
		}
		stream := i%2 == 1
		kind := "inference (plain)"
		read := decodeJSON(&struct{ Choices []json.RawMessage }{})
		if stream {
			kind, read = "inference (stream)", readSSE
		}
		s.client.do(ctx, soakReq{kind: kind, proc: s.center, method: http.MethodPost, path: "/v1/chat/completions",
			body: chatBody("bench-echo", s.pool.pick(rng), stream), header: map[string]string{"Service-Project": soakInferenceProject}, read: read})
	}
}

// readSSE reads a streamed answer to its end.
func readSSE(r io.Reader) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadSlice('\n')
		if bytes.HasPrefix(line, []byte("data: [DONE]")) {
			_, err = io.Copy(io.Discard, br)
			return err
		}
		if err != nil {
			return fmt.Errorf("stream ended before [DONE]: %v", err)
		}
	}
}

// soakReceiver is the webhook endpoint: it counts the deliveries of each
// alias and the signatures that did not verify.
type soakReceiver struct {
	url string
	srv *http.Server

	mu      sync.Mutex
	arrived map[int]int
	bad     int
}

func startSoakReceiver() (*soakReceiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := &soakReceiver{url: "http://" + l.Addr().String(), arrived: map[int]int{}}
	rc.srv = &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = rc.srv.Serve(l) }()
	return rc, nil
}

func (rc *soakReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var p struct{ Alias string }
	_ = json.Unmarshal(body, &p)
	n, err := strconv.Atoi(strings.TrimPrefix(p.Alias, "a"))
	rc.mu.Lock()
	if !verifyBench(r.Header, body) {
		rc.bad++
	}
	if err == nil {
		rc.arrived[n]++
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// missing counts the acknowledged aliases not delivered yet, and those
// delivered more than once.
func (rc *soakReceiver) missing(acked []int) (missing, repeated, bad int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, n := range acked {
		switch c := rc.arrived[n]; {
		case c == 0:
			missing++
		case c > 1:
			repeated++
		}
	}
	return missing, repeated, rc.bad
}

func (rc *soakReceiver) close() { _ = rc.srv.Close() }

// hooks gives the object aliases, one per request; an automation
// delivers each to the receiver. Acknowledged aliases must all arrive.
func (s *soak) hooks(ctx context.Context, stop <-chan struct{}, pace *pacer) {
	for n := 0; ; n++ {
		if !pace.wait(ctx, stop, 1) {
			return
		}
		body, _ := json.Marshal(map[string]any{"project_id": s.hooksProject, "digest": "latest", "aliases": []string{fmt.Sprintf("a%d", n)}})
		if s.client.acked(ctx, stop, soakReq{kind: "alias -> webhook", proc: s.center, method: http.MethodPut, path: "/objs/model/aliases", body: body}) {
			s.mu.Lock()
			s.aliases = append(s.aliases, n)
			s.mu.Unlock()
		}
	}
}

// setupHooks makes the webhook, its secret and an automation firing on
// every alias, as the automations benchmark does.
func (s *soak) setupHooks(ctx context.Context) error {
	api := &benchAPI{t: &target{url: s.center.url, key: s.key}, client: &http.Client{Timeout: time.Minute}}
	return api.setup(ctx, s.hooksProject, s.receiver.url)
}

// trainingJob is a leased job and the steps acknowledged on it.
type trainingJob struct {
	id, lease string
	acked     int // steps 1..acked acknowledged
	sent      int // steps 1..sent sent, perhaps applied
}

// training leases jobs and appends gradient steps to them, a batch per
// request, numbered so a batch sent again is applied once. After
// --train-steps steps it moves to a new job. A batch not acknowledged is
// sent again (same numbers) until it is.
func (s *soak) training(ctx context.Context, stop <-chan struct{}, pace *pacer) {
	const batch = 5
	var job *trainingJob
	for {
		if !pace.wait(ctx, stop, 1) {
			return
		}
		if job == nil || job.acked >= s.o.trainSteps {
			if job != nil {
				s.finishJob(ctx, job.id, job.lease)
			}
			var err error
			if job, err = s.newTrainingJob(ctx, stop); err != nil || job == nil {
				continue
			}
			s.mu.Lock()
			s.jobs = append(s.jobs, job)
			s.mu.Unlock()
		}
		evs := make([]protocol.Event, batch)
		for i := range evs {
			step := job.acked + i + 1
			evs[i] = protocol.Event{Type: "gradient_step", Data: json.RawMessage(fmt.Sprintf(`{"step":%d,"loss":%d.25,"grad_norm":1.5}`, step, 1000-step%1000))}
		}
		body, _ := json.Marshal(protocol.Events{Seq: int64(job.acked + 1), Events: evs})
		s.mu.Lock()
		job.sent = max(job.sent, job.acked+batch)
		s.mu.Unlock()
		o, status, _ := s.client.do(ctx, soakReq{kind: "training events", proc: s.center, method: http.MethodPost,
			path: "/v1/worker/jobs/" + url.PathEscape(job.id) + "/events", body: body, header: map[string]string{protocol.LeaseHeader: job.lease},
			okStatus: func(st int) bool { return st/100 == 2 || st == http.StatusConflict }})
		switch {
		case o == answeredOK && status == http.StatusConflict:
			// The lease was lost (it may expire while the center is
			// down): what was acknowledged stays; go on with a new job.
			s.mu.Lock()
			s.lostLeases++
			s.mu.Unlock()
			job = nil
		case o == answeredOK:
			s.mu.Lock()
			job.acked += batch
			s.mu.Unlock()
		}
	}
}

// newTrainingJob creates a job and leases one.
func (s *soak) newTrainingJob(ctx context.Context, stop <-chan struct{}) (*trainingJob, error) {
	groups := []any{map[string]any{"trajectories": []any{map[string]any{"reward": 1,
		"messages_and_choices": []any{map[string]any{"role": "user", "content": "hi"}}}}}}
	if !s.client.acked(ctx, stop, s.post("training job create", "/v1/preview/training-jobs",
		map[string]any{"model_id": s.trainingModel, "trajectory_groups": groups}, nil)) {
		return nil, errors.New("not created")
	}
	var l protocol.Lease
	body, _ := json.Marshal(protocol.LeaseRequest{Worker: "soak"})
	o, status, _ := s.client.do(ctx, soakReq{kind: "training lease", proc: s.center, method: http.MethodPost, path: "/v1/worker/lease",
		body: body, read: func(r io.Reader) error {
			raw, err := io.ReadAll(r)
			if err != nil || len(bytes.TrimSpace(raw)) == 0 {
				return err
			}
			return json.Unmarshal(raw, &l)
		}})
	if o != answeredOK || status == http.StatusNoContent || l.Job.ID == "" {
		return nil, errors.New("no lease")
	}
	s.mu.Lock()
	for _, j := range s.jobs {
		if j.id == l.Job.ID {
			// A job of ours whose lease ran out came back: its steps
			// are checked as they were; end it.
			s.mu.Unlock()
			s.finishJob(ctx, l.Job.ID, l.LeaseID)
			return nil, errors.New("leased again")
		}
	}
	s.mu.Unlock()
	return &trainingJob{id: l.Job.ID, lease: l.LeaseID}, nil
}

// finishJob ends a job the soak is done with, so it is not leased again.
func (s *soak) finishJob(ctx context.Context, id, lease string) {
	body, _ := json.Marshal(protocol.Finish{Status: "failed", ErrorMessage: "soak: enough steps"})
	s.client.do(ctx, soakReq{kind: "training finish", proc: s.center, method: http.MethodPost,
		path: "/v1/worker/jobs/" + url.PathEscape(id) + "/finish", body: body, header: map[string]string{protocol.LeaseHeader: lease},
		okStatus: func(st int) bool { return st/100 == 2 || st == http.StatusConflict }})
}

// setupTraining makes the model the jobs train.
func (s *soak) setupTraining(ctx context.Context) error {
	entity, project, _ := strings.Cut(soakTrainingProject, "/")
	var m struct{ ID string }
	o, status, _ := s.client.do(ctx, s.post("training model create", "/v1/preview/models", map[string]any{"entity": entity, "project": project,
		"name": "soak-model", "base_model": benchBaseModel, "return_existing": true}, decodeJSON(&m)))
	if o != answeredOK {
		return fmt.Errorf("training model: status %d", status)
	}
	s.trainingModel = m.ID
	return nil
}

// checkTraining pages every job's events back: each acknowledged step
// must be there once; a step sent but not acknowledged at most once.
func (s *soak) checkTraining(ctx context.Context) (acked, lost, duplicated int, examples []string) {
	s.mu.Lock()
	jobs := make([]trainingJob, len(s.jobs))
	for i, j := range s.jobs {
		jobs[i] = *j
	}
	s.mu.Unlock()
	for _, j := range jobs {
		acked += j.acked
		steps, err := s.pageSteps(ctx, j.id)
		if err != nil {
			lost += j.acked
			examples = append(examples, fmt.Sprintf("job %s: %v", j.id, err))
			continue
		}
		for step := 1; step <= j.sent; step++ {
			switch n := steps[step]; {
			case n == 0 && step <= j.acked:
				lost++
				if len(examples) < 5 {
					examples = append(examples, fmt.Sprintf("job %s: step %d lost", j.id, step))
				}
			case n > 1:
				duplicated++
				if len(examples) < 5 {
					examples = append(examples, fmt.Sprintf("job %s: step %d %d times", j.id, step, n))
				}
			}
		}
	}
	return acked, lost, duplicated, examples
}

// pageSteps counts each gradient step of a job's events, 100 a page.
func (s *soak) pageSteps(ctx context.Context, job string) (map[int]int, error) {
	steps := map[int]int{}
	after := ""
	for {
		var page struct {
			Data []struct {
				Type string
				Data struct{ Step int }
			}
			LastID  string `json:"last_id"`
			HasMore bool   `json:"has_more"`
		}
		r := soakReq{kind: "training events page", proc: s.center, method: http.MethodGet,
			path: "/v1/preview/training-jobs/" + url.PathEscape(job) + "/events?limit=100&after=" + url.QueryEscape(after), read: decodeJSON(&page)}
		if !s.client.acked(ctx, nil, r) {
			return nil, errors.New("events could not be read")
		}
		for _, e := range page.Data {
			if e.Type == "gradient_step" {
				steps[e.Data.Step]++
			}
		}
		if !page.HasMore {
			return steps, nil
		}
		after = page.LastID
	}
}
