package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// projectLedger records what the agent acknowledged for one project, in
// order, and which of those calls the center has served since: those
// must be in every later read of the project, whatever was killed
// meanwhile.
type projectLedger struct {
	project string
	mu      sync.Mutex
	// acked holds a call id once its start (or its span) was
	// acknowledged; ended once its end was (spans are both at once).
	acked   map[string]struct{}
	ended   map[string]struct{}
	renamed map[string]string // call id -> the last display name acknowledged
	order   []string          // acked ids in order, to pick reads from
	// visible are acknowledged ids the center has served, in the order
	// first seen; shown holds the same ids.
	visible []string
	shown   map[string]struct{}
}

func newProjectLedger(project string) *projectLedger {
	return &projectLedger{project: project, acked: map[string]struct{}{}, ended: map[string]struct{}{},
		renamed: map[string]string{}, shown: map[string]struct{}{}}
}

func (l *projectLedger) ack(ids []string, ended bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		if _, ok := l.acked[id]; !ok {
			l.acked[id] = struct{}{}
			l.order = append(l.order, id)
		}
		if ended {
			l.ended[id] = struct{}{}
		}
	}
}

func (l *projectLedger) end(ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		l.ended[id] = struct{}{}
	}
}

func (l *projectLedger) rename(id, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.renamed[id] = name
}

func (l *projectLedger) counts() (acked, ended, renamed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked), len(l.ended), len(l.renamed)
}

// pickVisible is one call the center has served, picked by n.
func (l *projectLedger) pickVisible(n int) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.visible) == 0 {
		return "", false
	}
	return l.visible[n%len(l.visible)], true
}

// served is one call as the center serves it.
type served struct {
	ID          string  `json:"id"`
	EndedAt     *string `json:"ended_at"`
	DisplayName *string `json:"display_name"`
}

// servedRows is a whole read of a project: every row, by call id, so a
// duplicated call shows as two rows.
type servedRows map[string][]served

// readServed reads a stream_query answer whole; a line that is not a
// whole JSON object means the answer was cut short.
func readServed(r io.Reader) (servedRows, error) {
	rows := servedRows{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var s served
		if err := json.Unmarshal(line, &s); err != nil {
			return rows, fmt.Errorf("line %q: %v", truncate(string(line), 80), err)
		}
		rows[s.ID] = append(rows[s.ID], s)
	}
	return rows, sc.Err()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// readCheck is what one whole read of a project showed against the
// ledger.
type readCheck struct {
	missingVisible int      // served before this read started, absent from it
	duplicated     int      // acknowledged calls served as more than one row
	examples       []string // a few of the ids concerned
}

// check compares a whole read with the ledger: every call served before
// the read began (nVisible of them) must be in it, and no acknowledged
// call twice. The acknowledged calls it served are visible from now on.
func (l *projectLedger) check(rows servedRows, nVisible int) readCheck {
	l.mu.Lock()
	defer l.mu.Unlock()
	var c readCheck
	for _, id := range l.visible[:nVisible] {
		if _, ok := rows[id]; !ok {
			c.missingVisible++
			if len(c.examples) < 5 {
				c.examples = append(c.examples, "missing "+id)
			}
		}
	}
	for id, rs := range rows {
		if _, ok := l.acked[id]; !ok {
			continue
		}
		if len(rs) > 1 {
			c.duplicated++
			if len(c.examples) < 5 {
				c.examples = append(c.examples, fmt.Sprintf("%d rows of %s", len(rs), id))
			}
		}
		if _, ok := l.shown[id]; !ok {
			l.shown[id] = struct{}{}
			l.visible = append(l.visible, id)
		}
	}
	return c
}

func (l *projectLedger) visibleCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.visible)
}

// pending counts acknowledged calls the read does not show as the ledger
// has them: absent, or without the end that was acknowledged.
func (l *projectLedger) pending(rows servedRows) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for id := range l.acked {
		rs, ok := rows[id]
		if !ok {
			n++
			continue
		}
		if _, ended := l.ended[id]; ended && rs[0].EndedAt == nil {
			n++
		}
	}
	return n
}

// finalCheck is the end of the soak's verdict on one project.
type finalCheck struct {
	acked, ended, renamed int
	lost                  int // acknowledged and absent, or its acknowledged end absent
	duplicated            int // acknowledged and served as more than one row
	staleRenames          int // display name older than the last acknowledged rename
	examples              []string
}

// final checks that every acknowledged call is served exactly once, with
// its end if that was acknowledged, and renamed to the last acknowledged
// name or one sent after it.
func (l *projectLedger) final(rows servedRows) finalCheck {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := finalCheck{acked: len(l.acked), ended: len(l.ended), renamed: len(l.renamed)}
	note := func(s string) {
		if len(c.examples) < 8 {
			c.examples = append(c.examples, s)
		}
	}
	for id := range l.acked {
		rs := rows[id]
		switch {
		case len(rs) == 0:
			c.lost++
			note("lost " + id)
			continue
		case len(rs) > 1:
			c.duplicated++
			note(fmt.Sprintf("%d rows of %s", len(rs), id))
		}
		if _, ended := l.ended[id]; ended && rs[0].EndedAt == nil {
			c.lost++
			note("end lost of " + id)
		}
	}
	for id, name := range l.renamed {
		rs := rows[id]
		if len(rs) != 1 {
			continue // counted above
		}
		final := ""
		if rs[0].DisplayName != nil {
			final = *rs[0].DisplayName
		}
		if !soakRenameAtOrAfter(final, name) {
			c.staleRenames++
			note(fmt.Sprintf("%s named %q, last acknowledged %q", id, final, name))
		}
	}
	return c
}

// soakRenameAtOrAfter reports whether final is the acknowledged rename
// or the one sent after it: a rename made durable whose answer was lost
// may arrive too, never one older than an acknowledged rename.
func soakRenameAtOrAfter(final, acked string) bool {
	if final == acked {
		return true
	}
	return strings.HasPrefix(acked, "first-") && final == "second-"+strings.TrimPrefix(acked, "first-")
}

// fullRead is the soak's whole-project stream_query.
func fullReadBody(project string) []byte {
	b, _ := json.Marshal(map[string]any{"project_id": project, "columns": []string{"id", "ended_at", "display_name"}})
	return b
}

// readProject reads every call of l's project from the center and checks
// it against the ledger. It returns the rows when the read was whole.
func (s *soak) readProject(ctx context.Context, l *projectLedger) (servedRows, outcome) {
	nVisible := l.visibleCount()
	var rows servedRows
	o, _, _ := s.client.do(ctx, soakReq{kind: fullReadKind, proc: s.center, method: "POST",
		path: "/calls/stream_query", body: fullReadBody(l.project),
		read: func(r io.Reader) error {
			var err error
			rows, err = readServed(r)
			return err
		}})
	switch o {
	case failed:
		// A read that fails where the client sees it (an error status, a
		// broken stream, a timeout) counts among the failed requests; a
		// short read is one that ended as if whole.
		return nil, o
	case answeredOK:
	default:
		return nil, o
	}
	c := l.check(rows, nVisible)
	if c.missingVisible > 0 {
		s.noteShortRead(fmt.Sprintf("%s: stream_query returned %d rows, %d fewer acknowledged calls than it had served before (%s)",
			l.project, len(rows), c.missingVisible, strings.Join(c.examples, ", ")))
	}
	if c.duplicated > 0 {
		s.mu.Lock()
		s.dupReads++
		s.mu.Unlock()
		fmt.Fprintf(s.log, "DUPLICATES: %s: a read served %d acknowledged calls twice or more (%s)\n", l.project, c.duplicated, strings.Join(c.examples, ", "))
	}
	return rows, o
}

func (s *soak) noteShortRead(msg string) {
	s.mu.Lock()
	s.shortReads++
	if len(s.shortExamples) < 5 {
		s.shortExamples = append(s.shortExamples, msg)
	}
	s.mu.Unlock()
	fmt.Fprintf(s.log, "SHORT READ: %s\n", msg)
}

// fullReads reads each project whole every o.fullReadEvery.
func (s *soak) fullReads(ctx context.Context, stop <-chan struct{}) {
	for i := 0; ; i++ {
		if !sleepOrStop(ctx, stop, s.o.fullReadEvery) {
			return
		}
		s.readProject(ctx, s.projects[i%len(s.projects)])
	}
}

// settle waits, at most limit, until the center serves every
// acknowledged call and span with its acknowledged end, reading each
// project whole again and again.
func (s *soak) settle(ctx context.Context, limit time.Duration) (time.Duration, int) {
	begin := time.Now()
	for {
		missing := 0
		for _, l := range s.projects {
			rows, o := s.readProject(ctx, l)
			if o != answeredOK {
				missing = -1
				break
			}
			missing += l.pending(rows)
		}
		if missing == 0 || time.Since(begin) > limit || ctx.Err() != nil {
			return time.Since(begin), missing
		}
		time.Sleep(500 * time.Millisecond)
	}
}
