package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/weftdev/weft/internal/atomicfile"
)

// FileStore keeps keys in a JSON file (mode 0600) in the data directory.
// It is shared safely between a running server and `weft keys` commands:
// writers hold an exclusive flock and replace the file atomically; readers
// reload when the file changes, at most once per reloadEvery.
type FileStore struct {
	path        string
	reloadEvery time.Duration

	mu       sync.Mutex
	byHash   map[string]Key
	keys     []Key
	modTime  time.Time
	size     int64
	lastStat time.Time
}

// KeysFile is the key file name inside the data directory.
const KeysFile = "keys.json"

// NewFileStore opens (without creating) the key file in dir.
func NewFileStore(dir string) *FileStore {
	return &FileStore{path: filepath.Join(dir, KeysFile), reloadEvery: 500 * time.Millisecond}
}

type keyFile struct {
	Keys []Key `json:"keys"`
}

// KeyByHash implements KeyStore.
func (s *FileStore) KeyByHash(_ context.Context, hash string) (Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(false); err != nil {
		return Key{}, err
	}
	k, ok := s.byHash[hash]
	if !ok {
		// A key made a moment ago (`weft keys create`, then its first
		// request) must not wait for the next reload: a miss looks at
		// the file again, which costs a stat unless it changed.
		if err := s.refreshLocked(true); err != nil {
			return Key{}, err
		}
		if k, ok = s.byHash[hash]; !ok {
			return Key{}, ErrKeyNotFound
		}
	}
	return k, nil
}

// ListKeys implements KeyStore.
func (s *FileStore) ListKeys(_ context.Context) ([]Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(true); err != nil {
		return nil, err
	}
	return append([]Key(nil), s.keys...), nil
}

// PutKey implements KeyStore.
func (s *FileStore) PutKey(_ context.Context, k Key) error {
	return s.update(func(f *keyFile) error {
		f.Keys = append(f.Keys, k)
		return nil
	})
}

// RevokeKey implements KeyStore.
func (s *FileStore) RevokeKey(_ context.Context, id string, at time.Time) error {
	return s.update(func(f *keyFile) error {
		for i := range f.Keys {
			if f.Keys[i].ID == id {
				if f.Keys[i].RevokedAt == nil {
					t := at.UTC()
					f.Keys[i].RevokedAt = &t
				}
				return nil
			}
		}
		return fmt.Errorf("%w: no key with id %q (see `weft keys list`)", ErrKeyNotFound, id)
	})
}

// refreshLocked reloads the file if it changed since the last load.
func (s *FileStore) refreshLocked(force bool) error {
	now := time.Now()
	if !force && s.byHash != nil && now.Sub(s.lastStat) < s.reloadEvery {
		return nil
	}
	s.lastStat = now
	st, err := os.Stat(s.path)
	if errors.Is(err, os.ErrNotExist) {
		s.byHash, s.keys = map[string]Key{}, nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	if s.byHash != nil && st.ModTime().Equal(s.modTime) && st.Size() == s.size {
		return nil
	}
	f, err := readKeyFile(s.path)
	if err != nil {
		return err
	}
	s.keys, s.modTime, s.size = f.Keys, st.ModTime(), st.Size()
	s.byHash = make(map[string]Key, len(f.Keys))
	for _, k := range f.Keys {
		s.byHash[k.Hash] = k
	}
	return nil
}

func readKeyFile(path string) (keyFile, error) {
	var f keyFile
	body, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("read key file: %w", err)
	}
	if err := json.Unmarshal(body, &f); err != nil {
		return f, fmt.Errorf("key file %s is corrupt: %w", path, err)
	}
	return f, nil
}

// update applies fn to the file under an exclusive lock and replaces it
// atomically, so concurrent writers in other processes never lose keys.
func (s *FileStore) update(fn func(*keyFile) error) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	lock, err := os.OpenFile(s.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("key lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("key lock: %w", err)
	}
	f, err := readKeyFile(s.path)
	if err != nil {
		return err
	}
	if err := fn(&f); err != nil {
		return err
	}
	if err := writeFileAtomic(s.path, f); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshLocked(true)
}

func writeFileAtomic(path string, f keyFile) error {
	body, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	err = atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(body)
		return err
	})
	if err != nil {
		return fmt.Errorf("write key file: %w", err)
	}
	return nil
}
