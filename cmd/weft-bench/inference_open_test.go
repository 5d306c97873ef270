package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSchedule(t *testing.T) {
	tests := []struct {
		name string
		rate float64
		d    time.Duration
		n    int
		due  map[int]time.Duration
	}{
		{"1000/s", 1000, 30 * time.Second, 30_000, map[int]time.Duration{0: 0, 1: time.Millisecond, 29_999: 29_999 * time.Millisecond}},
		{"3000/s", 3000, time.Second, 3000, map[int]time.Duration{1: 333_333, 3: time.Millisecond, 2999: 999_666_666}},
		{"fractional", 2.5, 2 * time.Second, 5, map[int]time.Duration{1: 400 * time.Millisecond, 4: 1600 * time.Millisecond}},
		{"under one", 0.4, time.Second, 0, map[int]time.Duration{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(tt.rate, tt.d)
			if s.n != tt.n {
				t.Errorf("n = %d, want %d", s.n, tt.n)
			}
			for i, want := range tt.due {
				if got := s.due(i); got != want {
					t.Errorf("due(%d) = %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestQuantile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"empty", nil, .5, 0},
		{"one", []time.Duration{7}, .99, 7},
		{"p50 of 100", hundred, .5, 50 * time.Millisecond},
		{"p99 of 100", hundred, .99, 99 * time.Millisecond},
		{"max", hundred, 1, 100 * time.Millisecond},
		{"min", hundred, 0, time.Millisecond},
		{"p50 of 3", []time.Duration{1, 2, 3}, .5, 2},
		{"p99 of 3", []time.Duration{1, 2, 3}, .99, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quantile(tt.sorted, tt.q); got != tt.want {
				t.Errorf("quantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

func TestParseRates(t *testing.T) {
	tests := []struct {
		in      string
		want    []float64
		wantErr bool
	}{
		{"", nil, false},
		{"1000,3000", []float64{1000, 3000}, false},
		{" 200 , 500.5", []float64{200, 500.5}, false},
		{"0", nil, true},
		{"-5", nil, true},
		{"fast", nil, true},
		{"1000,", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseRates("--rates", tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestScrapeSum(t *testing.T) {
	tests := []struct {
		name, page string
		want       float64
	}{
		{"absent", "# HELP other x\nother 5\n", 0},
		{"labelled", "# TYPE weft_inference_lost_calls counter\nweft_inference_lost_calls{reason=\"queue_full\"} 3\nweft_inference_lost_calls{reason=\"shutdown\"} 2\n", 5},
		{"unlabelled", "weft_inference_lost_calls 4\n", 4},
		{"prefix of another", "weft_inference_lost_calls_total 9\nweft_inference_lost_calls 1\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(tt.page)) }))
			defer srv.Close()
			got, err := scrapeSum(srv.URL, "weft_inference_lost_calls")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRunOpenKeepsTheSchedule checks that a slow answer does not hold the
// next requests back: with answers taking 50ms and a request due every
// 10ms, all are sent on time and the latencies count from the due times.
func TestRunOpenKeepsTheSchedule(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(50 * time.Millisecond)
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	ep := endpoint{name: "slow", url: srv.URL}
	r := runOpen(t.Context(), openClient(100), ep, false, 100, 300*time.Millisecond, [][]byte{[]byte(`{}`)})
	if r.sent != 30 || len(r.total) != 30 || r.errors != 0 {
		t.Fatalf("sent %d, answered %d, errors %d (%v); want 30 answered", r.sent, len(r.total), r.errors, r.firstErr)
	}
	if p50 := quantile(r.total, .5); p50 < 50*time.Millisecond {
		t.Errorf("p50 %v is below the server's 50ms", p50)
	}
	// Closed loop with one client would take 30*50ms = 1.5s; open loop
	// ends about 50ms after the last request is due at 290ms.
	if r.span > time.Second {
		t.Errorf("the load took %v: requests waited for answers", r.span)
	}
}
