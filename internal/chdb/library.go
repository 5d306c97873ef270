package chdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// EnvLibrary names the environment variable holding the path of libchdb.so.
const EnvLibrary = "WEFT_LIBCHDB"

// InstallHint tells a developer how to get the library.
const InstallHint = "run scripts/install-libchdb.sh (or set " + EnvLibrary + " to the path of libchdb.so)"

// ErrLibraryMissing reports that libchdb.so was not found. Errors wrapping it
// carry the path that was tried and InstallHint.
var ErrLibraryMissing = errors.New("libchdb not found")

// LibraryPath returns where libchdb.so is expected: $WEFT_LIBCHDB if set,
// otherwise the cache folder scripts/install-libchdb.sh installs into
// (${WEFT_CACHE_DIR:-$HOME/.cache/weft}/chdb/libchdb.so). It does not check
// that the file exists.
func LibraryPath() (string, error) {
	if p := os.Getenv(EnvLibrary); p != "" {
		return p, nil
	}
	root := os.Getenv("WEFT_CACHE_DIR")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("locate libchdb: %w; %s", err, InstallHint)
		}
		root = filepath.Join(home, ".cache", "weft")
	}
	return filepath.Join(root, "chdb", "libchdb.so"), nil
}

// process is the one libchdb instance of this process. The engine keeps
// process-wide state (one data path, global thread pools, signal handlers), and
// a dlopen'ed library cannot be meaningfully unloaded, so there is exactly one
// per process. It is created once, behind procOnce, and never replaced.
type process struct {
	lib *library

	mu     sync.Mutex
	active *Engine // the open engine, nil when none
}

var (
	procOnce sync.Once
	proc     *process
	procErr  error
)

// loadProcess loads the library from path on first use. Later calls must ask
// for the same path: a second copy of the engine cannot be loaded.
func loadProcess(path string) (*process, error) {
	// Checked on every call, not cached, so installing the library later in
	// the life of a process still works.
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w at %s: %w; %s", ErrLibraryMissing, path, err, InstallHint)
	}
	procOnce.Do(func() {
		lib, err := loadLibrary(path)
		if err != nil {
			procErr = fmt.Errorf("libchdb: %w", err)
			return
		}
		proc = &process{lib: lib}
	})
	if procErr != nil {
		return nil, procErr
	}
	if proc.lib.path != path {
		return nil, fmt.Errorf("libchdb already loaded from %s, cannot load %s too", proc.lib.path, path)
	}
	return proc, nil
}
