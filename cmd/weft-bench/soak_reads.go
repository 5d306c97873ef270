package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
)

// soakObjects records the object versions the center acknowledged.
type soakObjects struct {
	mu    sync.Mutex
	acked []objRef
}

type objRef struct{ id, digest string }

func (o *soakObjects) add(r objRef) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.acked = append(o.acked, r)
}

func (o *soakObjects) pick(n int) (objRef, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.acked) == 0 {
		return objRef{}, false
	}
	return o.acked[n%len(o.acked)], true
}

func (o *soakObjects) all() []objRef {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]objRef(nil), o.acked...)
}

// decodeJSON is a read that needs the answer to be one whole JSON value.
func decodeJSON(v any) func(io.Reader) error {
	return func(r io.Reader) error { return json.NewDecoder(r).Decode(v) }
}

// readLines is a read of a JSON-lines answer: every line must parse.
func readLines(r io.Reader) error {
	_, err := readServed(r)
	return err
}

// uiAuth is how the web UI sends the key: Basic, user "api".
func (s *soak) uiAuth() map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("api:"+s.key))}
}

// reads sends the center every other kind of read, and object writes, in
// turn, paced: one call by id (one the center has served before, so it
// must be found), stats, charts, objects, threads, and what the web UI's
// pages fetch.
func (s *soak) reads(ctx context.Context, stop <-chan struct{}, pace *pacer) {
	rng := rand.New(rand.NewPCG(s.nonce, 7))
	kinds := []func(context.Context, *rand.Rand){
		s.readCall, s.readStats, s.readAggregate, s.createObject, s.queryObjects, s.readObject,
		s.readThreads, s.uiCallsPage, s.uiStats, s.uiProjects, s.uiViewer, s.uiTable, s.uiTraining, s.readTrace,
	}
	for i := 0; ; i++ {
		if !pace.wait(ctx, stop, 1) {
			return
		}
		kinds[i%len(kinds)](ctx, rng)
	}
}

func (s *soak) post(kind, path string, body any, read func(io.Reader) error) soakReq {
	raw, _ := json.Marshal(body)
	return soakReq{kind: kind, proc: s.center, method: http.MethodPost, path: path, body: raw, read: read}
}

func (s *soak) readCall(ctx context.Context, rng *rand.Rand) {
	id, ok := s.calls.pickVisible(rng.IntN(1 << 30))
	if !ok {
		return
	}
	var res struct {
		Call *struct {
			ID string `json:"id"`
		} `json:"call"`
	}
	s.client.do(ctx, s.post("call/read", "/call/read", map[string]any{"project_id": s.calls.project, "id": id},
		func(r io.Reader) error {
			if err := json.NewDecoder(r).Decode(&res); err != nil {
				return err
			}
			if res.Call == nil || res.Call.ID != id {
				return fmt.Errorf("call %s, served before, not found", id)
			}
			return nil
		}))
}

// readTrace reads one served call's whole trace, as the trace page does.
func (s *soak) readTrace(ctx context.Context, rng *rand.Rand) {
	id, ok := s.calls.pickVisible(rng.IntN(1 << 30))
	if !ok {
		return
	}
	trace := id[:strings.LastIndexByte(id, '-')]
	s.client.do(ctx, s.post("stream_query (trace)", "/calls/stream_query", map[string]any{"project_id": s.calls.project,
		"filter": map[string]any{"trace_ids": []string{trace}}, "sort_by": []map[string]string{{"field": "started_at", "direction": "asc"}}},
		func(r io.Reader) error {
			rows, err := readServed(r)
			if err == nil && rows[id] == nil {
				err = fmt.Errorf("trace %s without its call %s, served before", trace, id)
			}
			return err
		}))
}

func (s *soak) readStats(ctx context.Context, _ *rand.Rand) {
	for _, l := range s.projects {
		var st struct{ Count *int }
		s.client.do(ctx, s.post("calls/query_stats", "/calls/query_stats", map[string]any{"project_id": l.project}, func(r io.Reader) error {
			if err := json.NewDecoder(r).Decode(&st); err != nil {
				return err
			}
			if st.Count == nil {
				return fmt.Errorf("no count")
			}
			return nil
		}))
	}
}

func (s *soak) readAggregate(ctx context.Context, _ *rand.Rand) {
	end := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
	var agg struct{ Buckets []json.RawMessage }
	s.client.do(ctx, s.post("calls/aggregate", "/calls/aggregate", map[string]any{"project_id": s.calls.project,
		"start": end.Add(-time.Hour).Format(time.RFC3339), "end": end.Format(time.RFC3339), "bucket_seconds": 60, "filter": map[string]any{}},
		func(r io.Reader) error {
			if err := json.NewDecoder(r).Decode(&agg); err != nil {
				return err
			}
			if len(agg.Buckets) != 60 {
				return fmt.Errorf("%d buckets, want 60", len(agg.Buckets))
			}
			return nil
		}))
}

func (s *soak) createObject(ctx context.Context, rng *rand.Rand) {
	id := fmt.Sprintf("prompt-%d", rng.IntN(20))
	var res struct{ Digest string }
	o, _, _ := s.client.do(ctx, s.post("obj/create", "/obj/create", map[string]any{"obj": map[string]any{"project_id": s.calls.project,
		"object_id": id, "val": map[string]any{"text": s.pool.pick(rng), "n": rng.Int64()}}}, decodeJSON(&res)))
	if o == answeredOK && res.Digest != "" {
		s.objects.add(objRef{id: id, digest: res.Digest})
	}
}

func (s *soak) queryObjects(ctx context.Context, _ *rand.Rand) {
	var res struct{ Objs []json.RawMessage }
	s.client.do(ctx, s.post("objs/query", "/objs/query", map[string]any{"project_id": s.calls.project,
		"filter": map[string]any{"latest_only": true}, "limit": 100}, decodeJSON(&res)))
}

func (s *soak) readObject(ctx context.Context, rng *rand.Rand) {
	ref, ok := s.objects.pick(rng.IntN(1 << 30))
	if !ok {
		return
	}
	s.client.do(ctx, s.objRead("obj/read", ref))
}

func (s *soak) objRead(kind string, ref objRef) soakReq {
	var res struct{ Obj struct{ Digest string } }
	return s.post(kind, "/obj/read", map[string]any{"project_id": s.calls.project, "object_id": ref.id, "digest": ref.digest},
		func(r io.Reader) error {
			if err := json.NewDecoder(r).Decode(&res); err != nil {
				return err
			}
			if res.Obj.Digest != ref.digest {
				return fmt.Errorf("object %s:%s read as %q", ref.id, ref.digest, res.Obj.Digest)
			}
			return nil
		})
}

func (s *soak) readThreads(ctx context.Context, _ *rand.Rand) {
	s.client.do(ctx, s.post("threads/stream_query", "/threads/stream_query", map[string]any{"project_id": s.calls.project, "limit": 200}, readLines))
}

// The web UI's reads, sent as it sends them.

func (s *soak) ui(r soakReq) soakReq {
	r.header = s.uiAuth()
	return r
}

func (s *soak) uiCallsPage(ctx context.Context, rng *rand.Rand) {
	l := s.projects[rng.IntN(len(s.projects))]
	s.client.do(ctx, s.ui(s.post("ui: calls page", "/calls/stream_query", map[string]any{"project_id": l.project,
		"filter": map[string]any{"trace_roots_only": true}, "sort_by": []map[string]string{{"field": "started_at", "direction": "desc"}},
		"limit": 50, "offset": 0, "include_costs": true,
		"columns": []string{"id", "trace_id", "parent_id", "op_name", "display_name", "started_at", "ended_at", "exception", "summary", "inputs"}}, readLines)))
}

func (s *soak) uiStats(ctx context.Context, _ *rand.Rand) {
	var st struct{ Count int }
	s.client.do(ctx, s.ui(s.post("ui: calls count", "/calls/query_stats", map[string]any{"project_id": s.calls.project,
		"filter": map[string]any{"trace_roots_only": true}}, decodeJSON(&st))))
}

func (s *soak) uiProjects(ctx context.Context, _ *rand.Rand) {
	var res struct{ Projects []json.RawMessage }
	s.client.do(ctx, s.ui(s.post("ui: projects/list", "/projects/list", map[string]any{"entity": soakEntity}, decodeJSON(&res))))
}

func (s *soak) uiViewer(ctx context.Context, _ *rand.Rand) {
	var res struct {
		Data struct{ Viewer json.RawMessage }
	}
	s.client.do(ctx, s.ui(s.post("ui: graphql viewer", "/graphql", map[string]any{"query": "{ viewer { username entity defaultEntity { name } } }"},
		func(r io.Reader) error {
			if err := json.NewDecoder(r).Decode(&res); err != nil {
				return err
			}
			if len(res.Data.Viewer) == 0 || string(res.Data.Viewer) == "null" {
				return fmt.Errorf("no viewer")
			}
			return nil
		})))
}

func (s *soak) uiTable(ctx context.Context, _ *rand.Rand) {
	if s.tableDigest == "" {
		return
	}
	var res struct{ Rows []json.RawMessage }
	s.client.do(ctx, s.ui(s.post("ui: table/query", "/table/query", map[string]any{"project_id": s.calls.project, "digest": s.tableDigest, "limit": 100},
		func(r io.Reader) error {
			if err := json.NewDecoder(r).Decode(&res); err != nil {
				return err
			}
			if len(res.Rows) != soakTableRows {
				return fmt.Errorf("table of %d rows read as %d", soakTableRows, len(res.Rows))
			}
			return nil
		})))
}

func (s *soak) uiTraining(ctx context.Context, _ *rand.Rand) {
	var res struct{ Data []json.RawMessage }
	entity, project, _ := strings.Cut(soakTrainingProject, "/")
	s.client.do(ctx, s.ui(soakReq{kind: "ui: training jobs", proc: s.center, method: http.MethodGet,
		path: "/v1/preview/training-jobs?entity=" + entity + "&project=" + project, read: decodeJSON(&res)}))
}

const soakTableRows = 20

// createTable makes the table the UI's table read pages through.
func (s *soak) createTable(ctx context.Context) error {
	rows := make([]map[string]any, soakTableRows)
	for i := range rows {
		rows[i] = map[string]any{"question": fmt.Sprintf("q%d %s", i, s.pool[i]), "answer": i}
	}
	var res struct{ Digest string }
	o, status, _ := s.client.do(ctx, s.post("table/create", "/table/create", map[string]any{"table": map[string]any{"project_id": s.calls.project, "rows": rows}}, decodeJSON(&res)))
	if o != answeredOK {
		return fmt.Errorf("table/create: status %d", status)
	}
	s.tableDigest = res.Digest
	return nil
}

// checkObjects reads back every object version the center acknowledged.
func (s *soak) checkObjects(ctx context.Context) (acked, lost int) {
	all := s.objects.all()
	for _, ref := range all {
		if !s.client.acked(ctx, nil, s.objRead("obj/read (final)", ref)) {
			lost++
		}
	}
	return len(all), lost
}
