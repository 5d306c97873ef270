package main

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreRefusesEntriesOutsideTheDataDir checks that weft restore
// writes only files and directories, and only inside the new data
// directory, whatever the tar holds.
func TestRestoreRefusesEntriesOutsideTheDataDir(t *testing.T) {
	tests := []struct {
		name    string
		entries []tar.Header
		want    string // "" restores
	}{
		{"files and directories", []tar.Header{{Name: "files/", Typeflag: tar.TypeDir, Mode: 0o700}, {Name: "files/ab", Typeflag: tar.TypeReg, Mode: 0o600}, {Name: "weft.duckdb", Typeflag: tar.TypeReg, Mode: 0o600}}, ""},
		{"parent directory", []tar.Header{{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o600}}, "leaves the data directory"},
		{"absolute path", []tar.Header{{Name: "/etc/escape", Typeflag: tar.TypeReg, Mode: 0o600}}, "leaves the data directory"},
		{"symlink", []tar.Header{{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}, "only files and directories"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, h := range tt.entries {
				body := []byte("x")
				if h.Typeflag != tar.TypeReg {
					body = nil
				}
				h.Size = int64(len(body))
				if err := tw.WriteHeader(&h); err != nil {
					t.Fatal(err)
				}
				if _, err := tw.Write(body); err != nil {
					t.Fatal(err)
				}
			}
			if err := tw.Close(); err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			dir := filepath.Join(root, "data")
			backup := filepath.Join(root, "b.tar")
			if err := os.WriteFile(backup, buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := runWeft(t, nil, "restore", "--from", backup, "--data-dir", dir)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if b, err := os.ReadFile(filepath.Join(dir, "files", "ab")); err != nil || string(b) != "x" {
					t.Fatalf("restored files/ab = %q, %v", b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("restore: %v, want %q", err, tt.want)
			}
			if _, err := os.Stat(filepath.Join(root, "escape")); err == nil {
				t.Fatal("an entry was written outside the data directory")
			}
		})
	}
}
