package chatstream

import (
	"encoding/json"
	"reflect"
	"testing"
)

// parseCases are payloads whose decoding depends on encoding/json's
// semantics: names in any case, duplicates, nulls, invalid UTF-8, wrong
// types and broken syntax.
var parseCases = []string{
	`{"id":"c1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"content":"hi\n\u00e9"},"finish_reason":null}],"usage":null}`,
	`{"ID":"upper","Choices":[{"Index":1,"DELTA":{"Content":"x"}}]}`,
	`{"id":"first","id":"last","choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`,
	`{"choices":null,"usage":{"total_tokens":3},"error":null}`,
	"{\"id\":\"bad \xff utf8\",\"choices\":[]}",
	`{"created":"not a number"}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":2,"function":{"name":"f","arguments":"{\"a\":1}"}}]}}]}`,
	`{"choices":[1]}`,
	`{"id":"trailing"} x`,
	`{"id":`,
	`{"error":"plain string"}`,
}

// TestParseMatchesEncodingJSON: Parse decodes exactly what encoding/json
// decodes, and fails where it fails.
func TestParseMatchesEncodingJSON(t *testing.T) {
	for _, in := range parseCases {
		t.Run(in, func(t *testing.T) { checkParse(t, []byte(in)) })
	}
}

func FuzzParseMatchesEncodingJSON(f *testing.F) {
	for _, in := range parseCases {
		f.Add([]byte(in))
	}
	f.Fuzz(checkParse)
}

func checkParse(t *testing.T, in []byte) {
	got, gotErr := Parse(in)
	var want Chunk
	wantErr := json.Unmarshal(in, &want)
	if gotErr == ErrNotChunk {
		return // not an object: never decoded
	}
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("Parse error %v, encoding/json error %v", gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(*got, want) {
		t.Fatalf("Parse %+v\nencoding/json %+v", *got, want)
	}
}

func BenchmarkParse(b *testing.B) {
	in := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"echo","choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}],"usage":null}`)
	for b.Loop() {
		if _, err := Parse(in); err != nil {
			b.Fatal(err)
		}
	}
}
