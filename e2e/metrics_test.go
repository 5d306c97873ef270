package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestMetricsScrapedFromRunningWeft writes spans and calls to a running
// weft, reads them back, and scrapes /metrics without a key: every stage
// of the write path reports what it did.
func TestMetricsScrapedFromRunningWeft(t *testing.T) {
	p := startWeft(t, t.TempDir())
	sendSpansTo(t, p.URL, p.AdminKey, "metrics/otel", 25)
	c := newClient(t, p.URL, p.AdminKey)
	_, body := upsertBody("metrics/weave", "m", 10)
	if status, out := c.post("/call/upsert_batch", body); status != http.StatusOK {
		t.Fatalf("upsert_batch = %d: %s", status, out)
	}
	// A read after the acknowledgement sees the writes, and waits for
	// every acknowledged write to reach the store.
	if got := readAllCalls(t, c, "metrics/weave"); len(got) != 10 {
		t.Fatalf("read back %d calls, want 10", len(got))
	}
	m := scrape(t, p.URL+"/metrics")
	for series, want := range map[string]float64{
		`otelcol_receiver_accepted_spans{receiver="otlp",transport="http"}`: 25,
		`weft_receiver_accepted_calls{receiver="weave",transport="http"}`:   20, // 10 starts, 10 ends
		`otelcol_exporter_queue_capacity{exporter="storage"}`:               2000000,
		`weft_processor_queue_capacity{processor="batch"}`:                  100000,
		`otelcol_exporter_sent_calls{exporter="storage"}`:                   35, // each start merged with its end
		`weft_storage_written_calls{backend="duckdb"}`:                      35,
		`otelcol_exporter_queue_size{exporter="storage"}`:                   0,
		`otelcol_receiver_refused_spans{receiver="otlp",transport="http"}`:  0,
		`otelcol_exporter_send_failed_calls{exporter="storage"}`:            0,
		`weft_storage_rejected_calls{backend="duckdb"}`:                     0,
		`weft_receiver_refused_calls{receiver="weave",transport="http"}`:    0,
		`otelcol_processor_refused_calls{processor="batch"}`:                0,
		`weft_exporter_queue_capacity_bytes{exporter="storage"}`:            1 << 30,
		`otelcol_processor_batch_batch_send_size_count{processor="batch"}`:  -1, // present, counted below
		`weft_storage_write_duration_seconds_count{backend="duckdb"}`:       -1,
		`weft_exporter_send_duration_seconds_count{exporter="storage"}`:     -1,
		`process_resident_memory_bytes`:                                     -1,
	} {
		got, ok := m[series]
		switch {
		case !ok:
			t.Errorf("%s missing from /metrics", series)
		case want >= 0 && got != want:
			t.Errorf("%s = %v, want %v", series, got, want)
		case want < 0 && got <= 0:
			t.Errorf("%s = %v, want > 0", series, got)
		}
	}
}

func TestMetricsListenMovesMetricsOffTheAPI(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	p := startWeft(t, t.TempDir(), "--metrics-listen", addr)
	if m := scrape(t, "http://"+addr+"/metrics"); len(m) == 0 {
		t.Fatal("no metrics on metrics_listen")
	}
	resp, err := http.Get(p.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/metrics on the API listener = %d, want 404 when metrics_listen is set", resp.StatusCode)
	}
}

// scrape reads a Prometheus text page into series -> value.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	var resp *http.Response
	var err error
	eventually(t, func() bool {
		resp, err = http.Get(url)
		return err == nil
	})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s = %d: %s", url, resp.StatusCode, b)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad metrics line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}
