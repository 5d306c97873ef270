package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	failed := errors.New("write failed")
	cases := []struct {
		name    string
		write   func(io.Writer) error
		want    string // the file's content after the call
		wantErr error
	}{
		{"replaces the file", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, "new", nil},
		{"a failed write leaves the old file", func(w io.Writer) error { io.WriteString(w, "half"); return failed }, "old", failed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := Write(path, tc.write); !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != tc.want {
				t.Fatalf("file holds %q (%v), want %q", got, err, tc.want)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("%d entries left in the directory, want the file alone", len(entries))
			}
			if info, _ := os.Stat(path); tc.wantErr == nil && info.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v, want 0600", info.Mode().Perm())
			}
		})
	}
}
