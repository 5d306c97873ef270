package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// soakSample is one look at the center (and the agent).
type soakSample struct {
	at         time.Duration // since the load started
	pid        int
	rssMiB     float64
	heapMiB    float64 // the Go heap in use: what RSS holds besides the store's buffer pool
	goroutines int
	fds        int
	agentRSS   float64
	forward    float64 // spans and calls the agent holds to forward
}

// sampleLoop samples every o.sampleEvery until done.
func (s *soak) sampleLoop(ctx context.Context, done <-chan struct{}) {
	for sleepOrStop(ctx, done, s.o.sampleEvery) {
		s.sample()
	}
}

var metricsClient = &http.Client{Timeout: 10 * time.Second}

// sample reads the center's RSS from /proc and its goroutines and open
// files from /metrics, and prints a line.
func (s *soak) sample() {
	at := s.since()
	pid := s.center.pid()
	if pid == 0 {
		fmt.Fprintf(s.log, "  %8v  center down (killed, starting again)\n", at)
		return
	}
	m, err := scrapeMetrics(s.center.url+"/metrics", "go_goroutines", "process_open_fds", "go_memstats_heap_inuse_bytes")
	if err != nil || s.center.pid() != pid {
		fmt.Fprintf(s.log, "  %8v  center pid %d: no metrics (%v)\n", at, pid, err)
		return
	}
	sm := soakSample{at: at, pid: pid, rssMiB: float64(procKiB(pid, "VmRSS")) / 1024,
		heapMiB: m["go_memstats_heap_inuse_bytes"] / (1 << 20), goroutines: int(m["go_goroutines"]), fds: int(m["process_open_fds"])}
	if sm.fds == 0 {
		if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
			sm.fds = len(fds)
		}
	}
	if apid := s.agent.pid(); apid != 0 {
		sm.agentRSS = float64(procKiB(apid, "VmRSS")) / 1024
		am, _ := scrapeMetrics(s.agent.url+"/metrics", `otelcol_exporter_queue_size{exporter="forward"}`)
		sm.forward = am[`otelcol_exporter_queue_size{exporter="forward"}`]
	}
	s.mu.Lock()
	s.samples = append(s.samples, sm)
	short, dup := s.shortReads, s.dupReads
	s.mu.Unlock()
	calls, _, _ := s.calls.counts()
	spans, _, _ := s.spans.counts()
	_, kills, crashes := s.center.counts()
	_, _, agentCrashes := s.agent.counts()
	fmt.Fprintf(s.log, "  %8v  center pid %d RSS %4.0f MiB (Go heap %3.0f), %4d goroutines, %3d fds | agent RSS %3.0f MiB, %5.0f to forward | acked %d calls, %d spans | %d requests, %d kills, %d crashes, %d short reads, %d duplicate reads, %d failed\n",
		at, pid, sm.rssMiB, sm.heapMiB, sm.goroutines, sm.fds, sm.agentRSS, sm.forward, calls, spans, s.stats.total(), kills,
		len(crashes)+len(agentCrashes), short, dup, s.failedRequests())
}

// scrapeMetrics reads the named unlabelled (or fully labelled) series.
func scrapeMetrics(url string, names ...string) (map[string]float64, error) {
	resp, err := metricsClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		for _, n := range names {
			if v, ok := strings.CutPrefix(sc.Text(), n+" "); ok {
				out[n], _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
			}
		}
	}
	return out, sc.Err()
}

// procKiB reads one memory figure (VmRSS, VmHWM) of a process.
func procKiB(pid int, field string) int64 {
	body, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// failedRequests counts the requests answered wrongly while their process
// stayed up, but for the whole-project reads, which are short reads.
func (s *soak) failedRequests() int {
	n := 0
	for _, k := range s.stats.rows() {
		if k.Kind != fullReadKind {
			n += k.Failed
		}
	}
	return n
}

const fullReadKind = "stream_query (whole project)"

// soakReport is the soak's outcome.
type soakReport struct {
	Duration, Settle          time.Duration
	Kills, AgentKills, Starts int
	Crashes                   int
	StalledStarts             int
	CrashLogs                 []string
	ShortReads, DupReads      int
	ShortExamples             []string
	Failed                    int
	Unreadable, Unsettled     int

	Calls, Ended, Renamed, Spans   int
	Lost, Duplicated, StaleRenames int

	Objects, ObjectsLost                              int
	Hooks, HooksMissing, HooksRepeated, BadSignatures int
	TrainSteps, TrainLost, TrainDuplicated            int
	LostLeases                                        int

	RSSFirst, RSSPeak, RSSLastThirdAvg, RSSMiddleMax, RSSLastMax float64 // MiB
	HeapFirst, HeapMiddleMax, HeapLastMax                        float64 // MiB
	Levelled, HeapLevelled, LevelJudged                          bool
	GoroutinesFirst, GoroutinesLast, FDsFirst, FDsLast           int
	Samples                                                      int

	Kinds []kindRow
}

// levelJudgedFrom is the shortest load whose RSS curve is judged: a
// shorter one has too few samples between kills to tell.
const levelJudgedFrom = 10 * time.Minute

func (s *soak) fillReport(r *soakReport) {
	s.mu.Lock()
	r.Duration = s.loadEnd.Sub(s.loadStart)
	r.ShortReads, r.DupReads, r.ShortExamples = s.shortReads, s.dupReads, s.shortExamples
	r.LostLeases = s.lostLeases
	samples := append([]soakSample(nil), s.samples...)
	s.mu.Unlock()
	var crashes []soakCrash
	var ac []soakCrash
	r.Starts, r.Kills, crashes = s.center.counts()
	_, r.AgentKills, ac = s.agent.counts()
	crashes = append(crashes, ac...)
	r.Crashes = len(crashes)
	r.StalledStarts = s.center.stalledStarts() + s.agent.stalledStarts()
	for _, c := range crashes {
		r.CrashLogs = append(r.CrashLogs, c.logPath)
	}
	r.Failed = s.failedRequests()
	r.Kinds = s.stats.rows()
	r.judgeSamples(samples)
}

// judgeSamples fills r's memory, goroutine and file figures from the
// samples, taken every --sample-every since the load started.
func (r *soakReport) judgeSamples(samples []soakSample) {
	r.Samples = len(samples)
	if len(samples) == 0 {
		return
	}
	first, last := samples[0], samples[len(samples)-1]
	r.RSSFirst, r.HeapFirst = first.rssMiB, first.heapMiB
	r.GoroutinesFirst, r.GoroutinesLast = first.goroutines, last.goroutines
	r.FDsFirst, r.FDsLast = first.fds, last.fds
	var lastSum float64
	var lastN int
	for _, sm := range samples {
		r.RSSPeak = max(r.RSSPeak, sm.rssMiB)
		// Only samples taken under load are judged: after it, the center
		// stores what it was sent (an agent's backlog, its own log) as
		// fast as it can, a burst the load's thirds do not compare.
		switch third := 3 * sm.at / max(r.Duration, time.Second); {
		case sm.at >= r.Duration:
		case third == 1:
			r.RSSMiddleMax = max(r.RSSMiddleMax, sm.rssMiB)
			r.HeapMiddleMax = max(r.HeapMiddleMax, sm.heapMiB)
		case third >= 2:
			r.RSSLastMax = max(r.RSSLastMax, sm.rssMiB)
			r.HeapLastMax = max(r.HeapLastMax, sm.heapMiB)
			lastSum += sm.rssMiB
			lastN++
		}
	}
	if lastN > 0 {
		r.RSSLastThirdAvg = lastSum / float64(lastN)
	}
	r.Levelled = levelled(r.RSSMiddleMax, r.RSSLastMax)
	r.HeapLevelled = levelled(r.HeapMiddleMax, r.HeapLastMax)
	r.LevelJudged = r.Duration >= levelJudgedFrom
}

// levelled is the soak's rule for a memory curve that levelled off: the
// last third's peak within 15% of the middle third's.
func levelled(middleMax, lastMax float64) bool {
	return middleMax > 0 && lastMax <= 1.15*middleMax
}

// failures lists the counts that must be zero and are not.
func (r soakReport) failures() []string {
	var out []string
	must := []struct {
		name string
		n    int
	}{
		{"crashes", r.Crashes}, {"stalled starts", r.StalledStarts}, {"short reads", r.ShortReads}, {"duplicate rows in reads", r.DupReads},
		{"failed requests", r.Failed}, {"projects unreadable at the end", r.Unreadable},
		{"lost", r.Lost}, {"duplicated", r.Duplicated}, {"renames older than acknowledged", r.StaleRenames},
		{"objects lost", r.ObjectsLost}, {"webhook deliveries missing", r.HooksMissing}, {"bad webhook signatures", r.BadSignatures},
		{"training steps lost", r.TrainLost}, {"training steps duplicated", r.TrainDuplicated},
	}
	for _, m := range must {
		if m.n != 0 {
			out = append(out, fmt.Sprintf("%s %d", m.name, m.n))
		}
	}
	if r.Calls+r.Spans == 0 {
		out = append(out, "nothing acknowledged: the soak proved nothing")
	}
	if r.LevelJudged && !r.Levelled {
		out = append(out, fmt.Sprintf("center RSS did not level off (last third max %.0f MiB, middle third %.0f MiB)", r.RSSLastMax, r.RSSMiddleMax))
	}
	if r.LevelJudged && !r.HeapLevelled {
		out = append(out, fmt.Sprintf("center Go heap did not level off (last third max %.0f MiB, middle third %.0f MiB)", r.HeapLastMax, r.HeapMiddleMax))
	}
	return out
}

func (r soakReport) print(w io.Writer) {
	mustBe := func(n int) string {
		if n == 0 {
			return "ok"
		}
		return "MUST BE 0"
	}
	row := func(name, value, verdict string) { fmt.Fprintf(w, "  %-20s %-70s %s\n", name, value, verdict) }
	fmt.Fprintln(w, "soak summary")
	row("duration", fmt.Sprintf("%v of load, then %v until everything was served", r.Duration.Round(time.Second), r.Settle.Round(100*time.Millisecond)), "")
	row("kills", fmt.Sprintf("center %d, agent %d (center started %d times)", r.Kills, r.AgentKills, r.Starts), "")
	row("crashes", strconv.Itoa(r.Crashes), mustBe(r.Crashes))
	for _, l := range r.CrashLogs {
		row("", "log: "+l, "")
	}
	row("stalled starts", strconv.Itoa(r.StalledStarts), mustBe(r.StalledStarts))
	row("short reads", strconv.Itoa(r.ShortReads), mustBe(r.ShortReads))
	for _, e := range r.ShortExamples {
		row("", truncate(e, 120), "")
	}
	row("duplicate rows read", strconv.Itoa(r.DupReads), mustBe(r.DupReads))
	row("failed requests", fmt.Sprintf("%d (not 2xx, 429 or 503, or cut off, while its process was up)", r.Failed), mustBe(r.Failed))
	row("acknowledged", fmt.Sprintf("%d calls (%d ended, %d renamed), %d spans", r.Calls, r.Ended, r.Renamed, r.Spans), "")
	row("lost", strconv.Itoa(r.Lost), mustBe(r.Lost))
	row("duplicated", strconv.Itoa(r.Duplicated), mustBe(r.Duplicated))
	row("stale renames", strconv.Itoa(r.StaleRenames), mustBe(r.StaleRenames))
	if r.Unreadable > 0 {
		row("unreadable projects", strconv.Itoa(r.Unreadable), mustBe(r.Unreadable))
	}
	row("objects", fmt.Sprintf("%d acknowledged, %d lost", r.Objects, r.ObjectsLost), mustBe(r.ObjectsLost))
	row("webhooks", fmt.Sprintf("%d acknowledged, %d not delivered, %d more than once, %d bad signatures",
		r.Hooks, r.HooksMissing, r.HooksRepeated, r.BadSignatures), mustBe(r.HooksMissing+r.BadSignatures))
	row("training", fmt.Sprintf("%d steps acknowledged, %d lost, %d duplicated (%d leases lost)", r.TrainSteps, r.TrainLost, r.TrainDuplicated, r.LostLeases),
		mustBe(r.TrainLost+r.TrainDuplicated))
	judge := func(ok bool) (level, verdict string) {
		level = "levelled off"
		if !ok {
			level = "did NOT level off"
		}
		if !r.LevelJudged {
			return level + fmt.Sprintf(" (not judged under %v)", levelJudgedFrom), ""
		}
		if !ok {
			return level, "LEAK?"
		}
		return level, "ok"
	}
	level, verdict := judge(r.Levelled)
	row("center RSS", fmt.Sprintf("first %.0f MiB, peak %.0f MiB, last-third average %.0f MiB", r.RSSFirst, r.RSSPeak, r.RSSLastThirdAvg), "")
	row("", fmt.Sprintf("max middle third %.0f MiB, last third %.0f MiB: %s", r.RSSMiddleMax, r.RSSLastMax, level), verdict)
	level, verdict = judge(r.HeapLevelled)
	row("center Go heap", fmt.Sprintf("first %.0f MiB, max middle third %.0f MiB, last third %.0f MiB: %s",
		r.HeapFirst, r.HeapMiddleMax, r.HeapLastMax, level), verdict)
	row("goroutines", fmt.Sprintf("first %d, last %d (%d samples)", r.GoroutinesFirst, r.GoroutinesLast, r.Samples), "")
	row("open fds", fmt.Sprintf("first %d, last %d", r.FDsFirst, r.FDsLast), "")
	fmt.Fprintf(w, "  %-32s %8s %7s %6s %11s %10s %10s %10s\n", "requests", "ok", "refused", "failed", "interrupted", "p50", "p99", "max")
	for _, k := range r.Kinds {
		fmt.Fprintf(w, "  %-32s %8d %7d %6d %11d %10v %10v %10v\n", k.Kind, k.OK, k.Refused, k.Failed, k.Interrupted, k.P50, k.P99, k.Max)
		for _, e := range k.FirstErrors {
			fmt.Fprintf(w, "      %s\n", truncate(e, 160))
		}
	}
	if bad := r.failures(); len(bad) > 0 {
		fmt.Fprintf(w, "  FAILED: %s\n", strings.Join(bad, "; "))
	} else {
		fmt.Fprintln(w, "  PASSED: no crash, no short read, nothing acknowledged lost or duplicated")
	}
}
