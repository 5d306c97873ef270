package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// target is the server under test.
type target struct {
	url, key string
	grpcAddr string
	dataDir  string // the started server's data dir
	// stored records were written; close reports the bytes each takes
	// on disk once the server has shut down and drained its logs.
	stored int
	unit   string
	// wireBytes is what one record takes on the wire, when known.
	wireBytes float64
	cmd       *exec.Cmd
	tmpDir    string
}

func connect(ctx context.Context, o options) (*target, error) {
	if o.url != "" {
		return &target{url: strings.TrimRight(o.url, "/"), key: o.key}, nil
	}
	dir := o.dataDir
	t := &target{}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "weft-bench"); err != nil {
			return nil, err
		}
		t.tmpDir = dir
	}
	t.dataDir = dir
	var err error
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--otlp-grpc-listen", "127.0.0.1:0", "--data-dir", dir, "--log-level", "warn"}, o.serveArgs...)
	t.cmd, t.url, t.grpcAddr, err = startWeft(ctx, o.weftBin, args...)
	if err != nil {
		t.close()
		return nil, err
	}
	key, err := os.ReadFile(filepath.Join(dir, "admin-key"))
	if err != nil {
		t.close()
		return nil, fmt.Errorf("admin key: %w", err)
	}
	t.key = strings.TrimSpace(string(key))
	return t, nil
}

// startWeft runs weft with args and returns once it prints its HTTP
// address (and, before it, its OTLP/gRPC one, if any).
func startWeft(ctx context.Context, bin string, args ...string) (cmd *exec.Cmd, url, grpcAddr string, err error) {
	cmd = exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", "", err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if after, ok := strings.CutPrefix(sc.Text(), "OTLP/gRPC on "); ok {
			grpcAddr = strings.TrimSpace(after)
		}
		if _, after, ok := strings.Cut(sc.Text(), "listening on "); ok {
			url = strings.Fields(after)[0]
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if url == "" {
		return cmd, "", "", fmt.Errorf("%s %s did not start", bin, args[0])
	}
	return cmd, url, grpcAddr, nil
}

// peakRSS reads the started server's high-water RSS from /proc.
func (t *target) peakRSS() string { return t.memory("VmHWM") }

// rss reads the started server's current RSS from /proc.
func (t *target) rss() string { return t.memory("VmRSS") }

// memory reads one memory figure of the started server from /proc.
func (t *target) memory(field string) string {
	if t.cmd == nil {
		return "n/a (server not started by weft-bench)"
	}
	body, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", t.cmd.Process.Pid))
	if err != nil {
		return "n/a"
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
		}
	}
	return "n/a"
}

// cpuSeconds is the CPU time (user and system) the started server has
// used so far, or -1 when weft-bench did not start it.
func (t *target) cpuSeconds() float64 {
	if t.cmd == nil {
		return -1
	}
	body, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", t.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	// Fields after the command name (which may hold spaces) start at
	// state; utime and stime are the 14th and 15th fields of the line.
	rest := string(body)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return -1
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

func (t *target) close() {
	if t.cmd != nil && t.cmd.Process != nil {
		_ = t.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = t.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			_ = t.cmd.Process.Kill()
		}
		if t.stored > 0 {
			perRecord := float64(diskBytes(t.dataDir)) / float64(t.stored)
			fmt.Printf("  on disk     %.0f bytes per stored %s (data dir after shutdown)", perRecord, t.unit)
			if t.wireBytes > 0 {
				fmt.Printf(", %.2f of its wire size", perRecord/t.wireBytes)
			}
			fmt.Println()
		}
	}
	if t.tmpDir != "" {
		_ = os.RemoveAll(t.tmpDir)
	}
}
