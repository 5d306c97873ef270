package e2e

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftdev/weft/app"
)

// TestImageServesAndForwards builds Weft's OCI image with
// scripts/build-image.sh, unpacks its root filesystem and runs `weft serve`
// and `weft agent` from it the way a container engine would: chrooted, as
// the image's non-root user, with the image's environment, where only the
// data and buffer directories are writable. A write through the agent's
// OTLP and Weave endpoints must be readable from the server. (No container
// engine runs here: the sandbox refuses setrlimit, so the test runs the
// image's filesystem instead.)
func TestImageServesAndForwards(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("this test chroots into the image and needs root, which CI has")
		}
		t.Skip("needs root to chroot into the image")
	}
	layout := buildImage(t)
	cfg, rootfs := unpackImage(t, layout)

	uid, gid := imageUser(t, cfg)
	if uid == 0 || gid == 0 {
		t.Fatalf("image user %q runs as root", cfg.User)
	}
	if len(cfg.Entrypoint) == 0 || filepath.Base(cfg.Entrypoint[0]) != "weft" {
		t.Fatalf("entrypoint %q is not weft", cfg.Entrypoint)
	}
	checkOnlyDataWritable(t, rootfs, uid)
	checkDockerfileAgrees(t, cfg)

	// The agent's buffer is a volume the pod mounts, owned by the user.
	must(t, os.MkdirAll(filepath.Join(rootfs, "var/lib/weft-agent"), 0o700))
	must(t, os.Chown(filepath.Join(rootfs, "var/lib/weft-agent"), uid, gid))

	version := imageCommand(rootfs, cfg, uid, gid, "version")
	out, err := version.Output()
	if err != nil || !strings.HasPrefix(string(out), "weft "+app.Version+" (commit ") {
		t.Fatalf("weft version in the image = %q (%v)", out, err)
	}
	if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil && !strings.Contains(string(out), strings.TrimSpace(string(head))) {
		t.Fatalf("weft version %q does not name the commit %s", out, head)
	}

	center := startWeftCmd(t, imageCommand(rootfs, cfg, uid, gid, "serve", "--listen", "127.0.0.1:0", "--otlp-grpc-listen", ""))
	if center.AdminKey == "" {
		t.Fatal("the server printed no admin key")
	}
	agent := startWeftCmd(t, imageCommand(rootfs, cfg, uid, gid, "agent", "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "",
		"--data-dir", "/var/lib/weft-agent", "--upstream", center.URL, "--agent-api-key", center.AdminKey))
	for _, p := range []*process{center, agent} {
		resp, err := http.Get(p.URL + "/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s/health = %d", p.URL, resp.StatusCode)
		}
	}

	const project = "acme/image"
	sendSpansTo(t, agent.URL, center.AdminKey, project, 5)
	ids, body := upsertBody(project, "image", 5)
	newClient(t, agent.URL, center.AdminKey).mustPost("/call/upsert_batch", body, nil)
	q := newClient(t, center.URL, center.AdminKey)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := readAllCalls(t, q, project)
		missing := 0
		for _, id := range ids {
			if _, ok := got[id]; !ok {
				missing++
			}
		}
		if missing == 0 && len(got) == len(ids)+5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s the server has %d calls (%d Weave calls missing), want %d", len(got), missing, len(ids)+5)
		}
		time.Sleep(200 * time.Millisecond)
	}
	checkNoWarnings(t, "serve in the image", center)
	checkNoWarnings(t, "the agent in the image", agent)
}

// imageConfig is the part of an OCI image config that says how to run it.
type imageConfig struct {
	User       string   `json:"User"`
	Env        []string `json:"Env"`
	Entrypoint []string `json:"Entrypoint"`
	WorkingDir string   `json:"WorkingDir"`
}

// buildImage runs scripts/build-image.sh and returns the OCI layout it
// printed last.
func buildImage(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("../scripts/build-image.sh", t.TempDir())
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/build-image.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// unpackImage reads the OCI layout's only manifest and unpacks its layers,
// in order, into a new directory, keeping owners and modes.
func unpackImage(t *testing.T, layout string) (imageConfig, string) {
	t.Helper()
	var index struct {
		Manifests []struct {
			Digest string `json:"digest"`
		} `json:"manifests"`
	}
	readJSON(t, filepath.Join(layout, "index.json"), &index)
	if len(index.Manifests) != 1 {
		t.Fatalf("index.json lists %d manifests, want 1", len(index.Manifests))
	}
	var manifest struct {
		Config struct {
			Digest string `json:"digest"`
		} `json:"config"`
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"layers"`
	}
	readJSON(t, blobPath(layout, index.Manifests[0].Digest), &manifest)
	var config struct {
		Config imageConfig `json:"config"`
	}
	readJSON(t, blobPath(layout, manifest.Config.Digest), &config)

	rootfs, err := os.MkdirTemp("", "weft-image-rootfs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(rootfs) })
	must(t, os.Chmod(rootfs, 0o755))
	for _, l := range manifest.Layers {
		if err := unpackLayer(blobPath(layout, l.Digest), strings.HasSuffix(l.MediaType, "+gzip"), rootfs); err != nil {
			t.Fatalf("layer %s: %v", l.Digest, err)
		}
	}
	return config.Config, rootfs
}

func blobPath(layout, digest string) string {
	algo, hex, _ := strings.Cut(digest, ":")
	return filepath.Join(layout, "blobs", algo, hex)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// unpackLayer extracts one layer tar into root. Names are checked to stay
// inside root; whiteouts do not occur in a single-layer image and are
// refused.
func unpackLayer(path string, gzipped bool, root string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if gzipped {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("gunzip: %w", err)
		}
		defer gz.Close()
		r = gz
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read tar: %w", err)
		}
		name := filepath.Clean("/" + h.Name)
		if strings.HasPrefix(filepath.Base(name), ".wh.") {
			return fmt.Errorf("whiteout %s in a single-layer image", h.Name)
		}
		target := filepath.Join(root, name)
		mode := h.FileInfo().Mode() & (fs.ModePerm | fs.ModeSticky | fs.ModeSetuid | fs.ModeSetgid)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("write %s: %w", name, err)
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
			if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
				return err
			}
			continue
		case tar.TypeLink:
			if err := os.Link(filepath.Join(root, filepath.Clean("/"+h.Linkname)), target); err != nil {
				return err
			}
			continue
		default:
			return fmt.Errorf("%s: unexpected tar entry type %c", h.Name, h.Typeflag)
		}
		if err := os.Chown(target, h.Uid, h.Gid); err != nil {
			return err
		}
		// After Chown, which clears the set-id bits.
		if err := os.Chmod(target, mode); err != nil {
			return err
		}
	}
}

// imageUser resolves the config's User, "uid[:gid]" as numbers.
func imageUser(t *testing.T, cfg imageConfig) (int, int) {
	t.Helper()
	u, g, hasGroup := strings.Cut(cfg.User, ":")
	uid, err := strconv.Atoi(u)
	if err != nil {
		t.Fatalf("image user %q is not numeric: Kubernetes' runAsNonRoot can only check a numeric user", cfg.User)
	}
	gid := uid
	if hasGroup {
		if gid, err = strconv.Atoi(g); err != nil {
			t.Fatalf("image group %q is not numeric", g)
		}
	}
	return uid, gid
}

// checkOnlyDataWritable fails unless everything in the image but the data
// directory and the sticky /tmp is root's and not writable by others: the
// image runs the same with readOnlyRootFilesystem.
func checkOnlyDataWritable(t *testing.T, rootfs string, uid int) {
	t.Helper()
	err := filepath.WalkDir(rootfs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := "/" + strings.TrimPrefix(path, rootfs+"/")
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		switch {
		case rel == "/var/lib/weft":
			if int(st.Uid) != uid || info.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: owner %d mode %v, want the user's %d and private", rel, st.Uid, info.Mode(), uid)
			}
		case rel == "/tmp":
			if info.Mode()&fs.ModeSticky == 0 {
				t.Errorf("/tmp is not sticky: %v", info.Mode())
			}
		case info.Mode()&fs.ModeSymlink != 0:
		case st.Uid != 0 || info.Mode().Perm()&0o022 != 0:
			t.Errorf("%s: owner %d mode %v: writable by the image's user or others", rel, st.Uid, info.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(rootfs, "bin/sh")); err == nil {
		t.Error("the image has a shell; it should hold weft and its libraries only")
	}
}

// imageCommand is `weft args...` as the image runs it: chrooted into rootfs
// as the image's user, with the image's environment and working directory.
func imageCommand(rootfs string, cfg imageConfig, uid, gid int, args ...string) *exec.Cmd {
	cmd := &exec.Cmd{Path: cfg.Entrypoint[0], Args: append(append([]string{}, cfg.Entrypoint...), args...), Env: cfg.Env, Dir: cfg.WorkingDir}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:     rootfs,
		Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
	}
	return cmd
}

// checkDockerfileAgrees fails when the Dockerfile's image would run
// differently from this one: its last stage's USER, ENTRYPOINT, WORKDIR
// and ENV must be the image config's. (No container engine runs here to
// build it.)
func checkDockerfileAgrees(t *testing.T, cfg imageConfig) {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	// Continuation lines joined, comments dropped, the last stage kept.
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	var last []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "FROM ") {
			last = nil
		}
		if line != "" && !strings.HasPrefix(line, "#") {
			last = append(last, line)
		}
	}
	got := map[string]string{}
	var env []string
	for _, line := range last {
		instr, rest, _ := strings.Cut(line, " ")
		switch instr {
		case "USER", "ENTRYPOINT", "WORKDIR":
			got[instr] = strings.TrimSpace(rest)
		case "ENV":
			env = append(env, strings.Fields(rest)...)
		}
	}
	entrypoint, _ := json.Marshal(cfg.Entrypoint)
	want := map[string]string{"USER": cfg.User, "ENTRYPOINT": strings.ReplaceAll(string(entrypoint), ",", ", "), "WORKDIR": cfg.WorkingDir}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Dockerfile %s %q, the image's %q", k, got[k], v)
		}
	}
	slices.Sort(env)
	imageEnv := slices.Sorted(slices.Values(cfg.Env))
	if !slices.Equal(env, imageEnv) {
		t.Errorf("Dockerfile ENV %q, the image's %q", env, imageEnv)
	}
}
