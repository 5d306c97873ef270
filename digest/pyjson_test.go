package digest

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// pyVector is one json.loads input with the text Python 3 json.dumps
// printed for it, with and without sort_keys and with compact separators,
// and str_digest of the sorted text (testdata/pyjson_vectors.json).
type pyVector struct {
	Input     string `json:"input"`
	Sorted    string `json:"sorted"`
	Insertion string `json:"insertion"`
	Compact   string `json:"compact"`
	Digest    string `json:"digest"`
}

func readTestdata(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", name))
}

func readJSONFile(t *testing.T, name string, into any) {
	t.Helper()
	raw, err := readTestdata(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func TestDumpsMatchesPython(t *testing.T) {
	var vectors []pyVector
	readJSONFile(t, "pyjson_vectors.json", &vectors)
	if len(vectors) < 50 {
		t.Fatalf("only %d vectors loaded", len(vectors))
	}
	for _, v := range vectors {
		t.Run(v.Input, func(t *testing.T) {
			sorted, err := Canonical(json.RawMessage(v.Input))
			if err != nil {
				t.Fatal(err)
			}
			if string(sorted) != v.Sorted {
				t.Errorf("sorted:\n got %s\nwant %s", sorted, v.Sorted)
			}
			ins, err := Dumps(json.RawMessage(v.Input), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if string(ins.Text) != v.Insertion {
				t.Errorf("insertion:\n got %s\nwant %s", ins.Text, v.Insertion)
			}
			compact, err := Dumps(json.RawMessage(v.Input), Options{Compact: true})
			if err != nil || string(compact.Text) != v.Compact {
				t.Errorf("compact:\n got %s\nwant %s (%v)", compact.Text, v.Compact, err)
			}
			if d, _ := ObjectDigest(json.RawMessage(v.Input)); d != v.Digest {
				t.Errorf("digest = %s, want %s", d, v.Digest)
			}
		})
	}
}

func TestDumpsFlagsNonFinite(t *testing.T) {
	tests := []struct {
		in     string
		finite bool
	}{
		{`[1e400]`, false},
		{`{"a": -1E999}`, false},
		{`[1e308, 1e-400, 123]`, true},
	}
	for _, tt := range tests {
		d, err := Dumps(json.RawMessage(tt.in), Options{SortKeys: true})
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if d.Finite != tt.finite {
			t.Errorf("%s: Finite = %v, want %v", tt.in, d.Finite, tt.finite)
		}
	}
}

func TestDumpsRejectsInvalidJSON(t *testing.T) {
	deep := make([]byte, 0, 2*(maxDepth+1))
	for range maxDepth + 1 {
		deep = append(deep, '[')
	}
	for range maxDepth + 1 {
		deep = append(deep, ']')
	}
	for _, in := range []string{
		``, ` `, `{`, `[1,]`, `[1 2]`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1,}`,
		`01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `NaN`, `Infinity`, `-Infinity`,
		`tru`, `nul`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"tab\there\"",
		"\"bad \xff utf8\"", `{} {}`, `[1]x`, string(deep),
	} {
		_, err := Dumps(json.RawMessage(in), Options{SortKeys: true})
		if !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("Dumps(%q) err = %v, want ErrInvalidJSON", in, err)
		}
	}
}

func TestAppendPyFloatMatchesPythonRepr(t *testing.T) {
	// Pairs of (IEEE-754 bits as hex, Python json.dumps of that float),
	// including 3000 random values (testdata/py_float_repr.json).
	var pairs [][2]string
	readJSONFile(t, "py_float_repr.json", &pairs)
	if len(pairs) < 4000 {
		t.Fatalf("only %d float vectors loaded", len(pairs))
	}
	for _, p := range pairs {
		b, err := hex.DecodeString(p[0])
		if err != nil {
			t.Fatal(err)
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(b))
		if got := string(AppendPyFloat(nil, f)); got != p[1] {
			t.Errorf("AppendPyFloat(%v) = %s, want %s", f, got, p[1])
		}
	}
	if got := string(AppendPyFloat(nil, math.NaN())); got != "NaN" {
		t.Errorf("NaN = %s", got)
	}
}
