package main

import (
	"archive/tar"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/weftdev/weft/app"
)

const backupUsage = `usage: weft backup --url URL --out FILE

Asks a running weft for a consistent snapshot of its embedded store and
writes it to FILE, a tar of a data directory (the store, the API keys and
the secrets key: keep it as private as the data directory). The server
goes on serving; its writes wait while the store is copied on its disk.
Restore it with 'weft restore --from FILE --data-dir DIR'.

The key is the instance admin key (admin-key in the data directory),
from --key or WEFT_API_KEY.

`

// backupCmd streams a backup from a running server into a file. The file
// appears only once the whole stream has arrived.
func backupCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, backupUsage); fs.PrintDefaults() }
	url := fs.String("url", getenv("WEFT_URL"), "weft's address, e.g. http://127.0.0.1:6345 (env WEFT_URL)")
	key := fs.String("key", "", "the instance admin key (env WEFT_API_KEY)")
	out := fs.String("out", "", "the tar file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *key == "" {
		*key = getenv("WEFT_API_KEY")
	}
	switch {
	case *url == "":
		return errors.New("backup: set --url (or WEFT_URL) to the running server's address")
	case *key == "":
		return errors.New("backup: set WEFT_API_KEY (or --key) to the instance admin key")
	case *out == "":
		return errors.New("backup: set --out to the tar file to write")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(*url, "/")+app.BackupPath, nil)
	if err != nil {
		return fmt.Errorf("backup: --url: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+*key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("backup: the server answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	tmp := *out + ".partial"
	if err := receiveTar(resp.Body, tmp); err != nil {
		return errors.Join(fmt.Errorf("backup: %w", err), os.Remove(tmp))
	}
	if err := os.Rename(tmp, *out); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintln(stdout, *out)
	return nil
}

// receiveTar writes the stream to path, checking as it goes that it is a
// whole tar: a cut connection leaves no end marker and fails here.
func receiveTar(body io.Reader, path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	tr := tar.NewReader(io.TeeReader(body, f))
	for {
		_, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("the stream is not a whole backup: %w", err)
		}
	}
	if _, err := io.Copy(f, body); err != nil { // tar's trailing padding
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

const restoreUsage = `usage: weft restore --from FILE --data-dir DIR

Unpacks a backup written by 'weft backup' into DIR, which must be missing
or empty, for 'weft serve --data-dir DIR'.

`

// restoreCmd unpacks a backup into a new data directory.
func restoreCmd(_ context.Context, args []string, stdout, stderr io.Writer, _ func(string) string) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, restoreUsage); fs.PrintDefaults() }
	from := fs.String("from", "", "the backup file")
	dir := fs.String("data-dir", "", "the new data directory (missing or empty)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || *dir == "" {
		return errors.New("restore: set --from to a backup file and --data-dir to a missing or empty directory")
	}
	if entries, err := os.ReadDir(*dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("restore: %s is not empty; restore into a new directory, then point --data-dir at it", *dir)
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	f, err := os.Open(*from)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	n, err := unpackBackup(f, *dir)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(stdout, "restored %d files into %s\n", n, *dir)
	return nil
}

// unpackBackup extracts the tar's directories and regular files into dir,
// privately; any other entry, or a name leaving dir, is refused.
func unpackBackup(r io.Reader, dir string) (int, error) {
	tr := tar.NewReader(r)
	files := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return files, fmt.Errorf("not a whole backup: %w", err)
		}
		if !filepath.IsLocal(h.Name) {
			return files, fmt.Errorf("entry %q leaves the data directory", h.Name)
		}
		target := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o700); err != nil {
				return files, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
				return files, err
			}
			if err := writeRestored(target, tr); err != nil {
				return files, err
			}
			files++
		default:
			return files, fmt.Errorf("entry %q: a backup holds only files and directories", h.Name)
		}
	}
}

func writeRestored(path string, r io.Reader) error {
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, r)
	if err == nil {
		err = out.Sync()
	}
	return errors.Join(err, out.Close())
}
