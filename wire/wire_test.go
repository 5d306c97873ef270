package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftdev/weft/storage"
)

func TestParseTime(t *testing.T) {
	want := time.Date(2025, 1, 2, 3, 4, 5, 123000000, time.UTC)
	for _, in := range []string{
		`"2025-01-02T03:04:05.123Z"`, `"2025-01-02T03:04:05.123+00:00"`, `"2025-01-02T05:04:05.123+02:00"`,
		`"2025-01-02T03:04:05.123"`, `"2025-01-02 03:04:05.123"`,
	} {
		var tm Time
		if err := json.Unmarshal([]byte(in), &tm); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if !tm.Equal(want) {
			t.Errorf("%s parsed as %v, want %v", in, tm.Time, want)
		}
	}
	// Numbers are refused in bodies: started_at: 1 is a mistake, not 1970.
	for _, bad := range []string{`"yesterday"`, `true`, `"2025-13-45T00:00:00Z"`, `1e300`, `1`, `1735787045.123`, `"1735787045.123"`} {
		var tm Time
		if err := json.Unmarshal([]byte(bad), &tm); err == nil {
			t.Errorf("%s accepted as %v", bad, tm.Time)
		}
	}
}

// Query literals compared with datetimes may be unix seconds.
func TestParseTimeAcceptsUnixSeconds(t *testing.T) {
	want := time.Date(2025, 1, 2, 3, 4, 5, 123000000, time.UTC)
	for _, in := range []string{"1735787045.123", "2025-01-02T03:04:05.123Z"} {
		if got, err := ParseTime(in); err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%s) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestFormatTime(t *testing.T) {
	tests := map[time.Time]string{
		time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC):         "2025-01-02T03:04:05Z",
		time.Date(2025, 1, 2, 3, 4, 5, 120000000, time.UTC): "2025-01-02T03:04:05.120000Z",
		time.Date(2025, 1, 2, 3, 4, 5, 999, time.UTC):       "2025-01-02T03:04:05Z",
	}
	for in, want := range tests {
		if got := FormatTime(in); got != want {
			t.Errorf("FormatTime(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestDecodeTop(t *testing.T) {
	type target struct {
		ID    string
		Limit *int64
		Start StartedCall
	}
	tests := []struct {
		name      string
		body      string
		wantField string
		unknown   bool
	}{
		{"ok with nulls and nested unknowns", `{"id":"a","limit":null,"start":{"op_name":"x","future":1}}`, "", false},
		{"unknown top-level", `{"id":"a","bogus":1}`, "bogus", true},
		{"missing required", `{"limit":3}`, "id", false},
		{"required null", `{"id":null}`, "id", false},
		{"wrong type", `{"id":"a","limit":"ten"}`, "limit", false},
		{"nested wrong type", `{"id":"a","start":{"op_name":5}}`, "start.op_name", false},
		{"not json", `{"id":`, "", false},
		{"not an object", `[1,2]`, "", false},
		{"bad datetime", `{"id":"a","start":{"started_at":"soon"}}`, "start", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v target
			err := DecodeTop([]byte(tc.body), Fields{"id": &v.ID, "limit": &v.Limit, "start": &v.Start}, "id")
			if tc.name == "ok with nulls and nested unknowns" {
				if err != nil || v.ID != "a" || v.Limit != nil || v.Start.OpName != "x" {
					t.Fatalf("err=%v v=%+v", err, v)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a FieldError", err)
			}
			if !strings.HasPrefix(fe.Field, tc.wantField) || fe.Unknown != tc.unknown {
				t.Fatalf("FieldError = %+v, want field %q unknown=%v", fe, tc.wantField, tc.unknown)
			}
		})
	}
}

func noRefs(json.RawMessage) []string { return nil }

func TestStartPartValidation(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct {
		name  string
		start StartedCall
		field string
	}{
		{"no project", StartedCall{OpName: "op", StartedAt: Time{time.Now()}}, "project_id"},
		{"no op", StartedCall{ProjectID: "e/p", StartedAt: Time{time.Now()}}, "op_name"},
		{"long op", StartedCall{ProjectID: "e/p", OpName: long, StartedAt: Time{time.Now()}}, "op_name"},
		{"no started_at", StartedCall{ProjectID: "e/p", OpName: "op"}, "started_at"},
		{"otel_dump not object", StartedCall{ProjectID: "e/p", OpName: "op", StartedAt: Time{time.Now()}, OtelDump: json.RawMessage(`"span"`)}, "otel_dump"},
		{"inputs not object", StartedCall{ProjectID: "e/p", OpName: "op", StartedAt: Time{time.Now()}, Inputs: json.RawMessage(`[1]`)}, "inputs"},
		{"id of a MiB", StartedCall{ProjectID: "e/p", ID: strings.Repeat("a", 1<<20), OpName: "op", StartedAt: Time{time.Now()}}, "id"},
		{"id past the limit", StartedCall{ProjectID: "e/p", ID: strings.Repeat("a", MaxIDLen+1), OpName: "op", StartedAt: Time{time.Now()}}, "id"},
		{"id with a space", StartedCall{ProjectID: "e/p", ID: "a b", OpName: "op", StartedAt: Time{time.Now()}}, "id"},
		{"id with a NUL", StartedCall{ProjectID: "e/p", ID: "a\x00", OpName: "op", StartedAt: Time{time.Now()}}, "id"},
		{"id with a slash", StartedCall{ProjectID: "e/p", ID: "a/b", OpName: "op", StartedAt: Time{time.Now()}}, "id"},
		{"long trace id", StartedCall{ProjectID: "e/p", TraceID: long, OpName: "op", StartedAt: Time{time.Now()}}, "trace_id"},
		{"parent id with a newline", StartedCall{ProjectID: "e/p", ParentID: ptr("p\n"), OpName: "op", StartedAt: Time{time.Now()}}, "parent_id"},
		{"inputs too deep", StartedCall{ProjectID: "e/p", OpName: "op", StartedAt: Time{time.Now()}, Inputs: nested(MaxValueDepth + 1)}, "inputs"},
		{"inputs 5000 deep", StartedCall{ProjectID: "e/p", OpName: "op", StartedAt: Time{time.Now()}, Inputs: nested(5000)}, "inputs"},
		{"attributes too deep", StartedCall{ProjectID: "e/p", OpName: "op", StartedAt: Time{time.Now()}, Attributes: nested(MaxValueDepth + 1)}, "attributes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.start.StartPart("u", noRefs)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("err = %v, want field %s", err, tc.field)
			}
		})
	}
	for _, id := range []string{"0192c6a3-8b2e-7f3a-9c1d-2e4f6a8b0c1d", "5f0c7a1b2c3d4e5f", "5f0c7a1b2c3d4e5f5f0c7a1b2c3d4e5f", strings.Repeat("a", MaxIDLen)} {
		deep := StartedCall{ProjectID: "e/p", ID: id, TraceID: id, ParentID: &id, OpName: "op", StartedAt: Time{time.Now()}, Inputs: nested(MaxValueDepth)}
		if _, err := deep.StartPart("u", noRefs); err != nil {
			t.Errorf("id %q with inputs %d deep: %v", id, MaxValueDepth, err)
		}
	}
	s := StartedCall{ProjectID: "e/p", OpName: "weave:///e/p/op/" + long + ":d", StartedAt: Time{time.Now()}, WBUserID: ptr("spoofed")}
	p, err := s.StartPart("real-user", noRefs)
	if err != nil {
		t.Fatal(err)
	}
	if p.Call.ID == "" || p.Call.TraceID == "" || p.Call.WBUserID != "real-user" || string(p.Call.Inputs) != "{}" {
		t.Fatalf("generated fields wrong: %+v", p.Call)
	}
}

func ptr[T any](v T) *T { return &v }

// nested is an object depth levels deep: {"a":[{"a":[...]}]}, counting
// objects and arrays alike.
func nested(depth int) json.RawMessage {
	var b strings.Builder
	for i := range depth {
		if i%2 == 0 {
			b.WriteString(`{"a":`)
		} else {
			b.WriteString(`[`)
		}
	}
	b.WriteString(`1`)
	for i := depth - 1; i >= 0; i-- {
		if i%2 == 0 {
			b.WriteString(`}`)
		} else {
			b.WriteString(`]`)
		}
	}
	return json.RawMessage(b.String())
}

func TestEndAndCompletePartValidation(t *testing.T) {
	now := Time{time.Now()}
	tests := []struct {
		name  string
		part  func() error
		field string
	}{
		{"end id past the limit", func() error {
			_, err := (&EndedCall{ProjectID: "e/p", ID: strings.Repeat("a", MaxIDLen+1), EndedAt: now}).EndPart(noRefs)
			return err
		}, "id"},
		{"end id with a tab", func() error {
			_, err := (&EndedCall{ProjectID: "e/p", ID: "a\tb", EndedAt: now}).EndPart(noRefs)
			return err
		}, "id"},
		{"output too deep", func() error {
			_, err := (&EndedCall{ProjectID: "e/p", ID: "c", EndedAt: now, Output: nested(MaxValueDepth + 1)}).EndPart(noRefs)
			return err
		}, "output"},
		{"summary too deep", func() error {
			_, err := (&EndedCall{ProjectID: "e/p", ID: "c", EndedAt: now, Summary: nested(MaxValueDepth + 1)}).EndPart(noRefs)
			return err
		}, "summary"},
		{"complete output too deep", func() error {
			cc := CompletedCall{StartedCall: StartedCall{ProjectID: "e/p", ID: "c", TraceID: "t", OpName: "op", StartedAt: now},
				EndedAt: now, Output: nested(5000)}
			_, err := cc.CompletePart("u", noRefs)
			return err
		}, "output"},
		{"complete id of a MiB", func() error {
			cc := CompletedCall{StartedCall: StartedCall{ProjectID: "e/p", ID: strings.Repeat("a", 1<<20), TraceID: "t", OpName: "op", StartedAt: now},
				EndedAt: now}
			_, err := cc.CompletePart("u", noRefs)
			return err
		}, "id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var fe *FieldError
			if err := tc.part(); !errors.As(err, &fe) || fe.Field != tc.field || fe.Schema != "" {
				t.Fatalf("err = %v, want a 400 field error on %s", err, tc.field)
			}
		})
	}
	if _, err := (&EndedCall{ProjectID: "e/p", ID: "c", EndedAt: now, Output: nested(MaxValueDepth), Summary: nested(MaxValueDepth)}).EndPart(noRefs); err != nil {
		t.Errorf("output and summary %d deep: %v", MaxValueDepth, err)
	}
}

func TestCallSchemaDerivedSummary(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(1500 * time.Millisecond)
	tests := []struct {
		name       string
		call       storage.Call
		wantStatus string
		wantName   string
	}{
		{"running", storage.Call{OpName: "weave:///e/p/op/add:abc", StartedAt: t0}, "running", "add"},
		{"error", storage.Call{OpName: "plain", StartedAt: t0, EndedAt: &t1, Exception: ptr("x")}, "error", "plain"},
		{"descendant error", storage.Call{OpName: "o", StartedAt: t0, EndedAt: &t1, Summary: json.RawMessage(`{"status_counts":{"error":2}}`)}, "descendant_error", "o"},
		{"success", storage.Call{OpName: "o", StartedAt: t0, EndedAt: &t1, Summary: json.RawMessage(`{"weave":{"status":"stale"}}`)}, "success", "o"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewCallSchema(storage.StoredCall{Call: tc.call}, Extras{})
			var sum struct {
				Weave struct {
					Status    string `json:"status"`
					TraceName string `json:"trace_name"`
					Latency   *int64 `json:"latency_ms"`
				} `json:"weave"`
			}
			if err := json.Unmarshal(s.Summary, &sum); err != nil {
				t.Fatal(err)
			}
			if sum.Weave.Status != tc.wantStatus || sum.Weave.TraceName != tc.wantName {
				t.Fatalf("summary.weave = %+v", sum.Weave)
			}
			if (tc.call.EndedAt != nil) != (sum.Weave.Latency != nil) || (sum.Weave.Latency != nil && *sum.Weave.Latency != 1500) {
				t.Fatalf("latency = %v", sum.Weave.Latency)
			}
		})
	}
}

func FuzzDecodeTop(f *testing.F) {
	for _, s := range []string{`{"start":{"project_id":"e/p","op_name":"o","started_at":"2025-01-01T00:00:00Z"}}`, `{}`, `null`, `{"start":null}`, `{"start":{"started_at":1e999}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var s StartedCall
		if err := DecodeTop(body, Fields{"start": &s}, "start"); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("non-field error %T: %v", err, err)
			}
			return
		}
		_, _ = s.StartPart("u", noRefs)
	})
}

// FuzzSplitTop checks the fast top-level split against encoding/json: on
// every input both accept, the keys and each member's value agree.
func FuzzSplitTop(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1,{"c":"}"}],"d":"x\"y"}`, ` {"k\u0041":null} `, `{"a":{"b":[]}}`, `[1]`, `{"a":}`, `{"a":1}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ferr := splitTop(body)
		var std map[string]json.RawMessage
		serr := json.Unmarshal(body, &std)
		if serr != nil || std == nil {
			return // DecodeTop then reports encoding/json's error
		}
		if ferr != nil {
			t.Fatalf("valid object %q refused: %v", body, ferr)
		}
		if len(fast) != len(std) {
			t.Fatalf("keys %v vs %v", fast, std)
		}
		for k, v := range std {
			if !bytes.Equal(bytes.TrimSpace(fast[k]), bytes.TrimSpace(v)) {
				t.Fatalf("member %q: %q vs %q", k, fast[k], v)
			}
		}
	})
}

// FuzzDecodeValueMatchesEncodingJSON checks the fast decoder against
// encoding/json on the bodies of the write endpoints: whatever one
// accepts the other accepts, with the same result.
func FuzzDecodeValueMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"project_id":"e/p","id":"c","trace_id":"t","op_name":"o","started_at":"2025-01-01T00:00:00.5Z","attributes":{"a":[1,2]},"inputs":{"x":"\u00e9\n"}}`,
		`{"Project_ID":"e/p","op_name":"o","started_at":1735689600.25,"inputs":{},"unknown":{"nested":true}}`,
		`{"project_id":"e/p","id":"c","ended_at":"2025-01-01T00:00:01Z","output":[1,"two",null],"summary":{"usage":{}},"exception":null}`,
		`{"project_id":"e/p","id":"c","id":"d","started_at":"2025-01-01T00:00:00Z"}`,
		`{"project_id":1}`, `{"started_at":"not a time"}`, `{"inputs":{"a":"\ud800"}}`, `[]`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, val []byte) {
		var fastStart, stdStart StartedCall
		fastErr, stdErr := decodeValue(val, &fastStart), json.Unmarshal(val, &stdStart)
		if (fastErr == nil) != (stdErr == nil) {
			t.Fatalf("%q: fast decoder %v, encoding/json %v", val, fastErr, stdErr)
		}
		if fastErr == nil && !reflect.DeepEqual(fastStart, stdStart) {
			t.Fatalf("%q: fast decoder %+v, encoding/json %+v", val, fastStart, stdStart)
		}
		var fastEnd, stdEnd EndedCall
		fastErr, stdErr = decodeValue(val, &fastEnd), json.Unmarshal(val, &stdEnd)
		if (fastErr == nil) != (stdErr == nil) || (fastErr == nil && !reflect.DeepEqual(fastEnd, stdEnd)) {
			t.Fatalf("%q: fast decoder %+v (%v), encoding/json %+v (%v)", val, fastEnd, fastErr, stdEnd, stdErr)
		}
	})
}
