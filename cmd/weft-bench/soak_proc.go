package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// soakProc is a weft process of the soak (the center or the agent) that
// is started again whenever it exits: after the soak SIGKILLs it, or
// after it crashed on its own, which is counted and its log kept. It
// keeps one loopback address across restarts, so the agent's upstream
// and the load's URLs stay valid.
type soakProc struct {
	name   string // "center" or "agent"
	bin    string
	args   []string // after the listen address
	addr   string   // 127.0.0.1:port
	url    string
	logDir string
	// downFor is how long it stays down after the soak killed it.
	downFor time.Duration
	log     io.Writer // progress lines

	mu       sync.Mutex
	gen      int  // changes whenever it starts or stops
	up       bool // listening, and not being killed
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the current run has exited
	killing  bool          // the current run was signalled by the soak
	stopping bool          // the soak is over: do not start again
	starts   int
	kills    int
	crashes  []soakCrash
	stalled  int           // starts killed for not listening in time
	upCond   chan struct{} // closed and replaced whenever up turns true
	done     chan struct{} // closed when keep returns
	startErr error
}

// soakCrash is one exit the soak did not cause.
type soakCrash struct {
	at      time.Time
	status  string
	logPath string
	excerpt string
}

func newSoakProc(name, bin, logDir string, args []string, downFor time.Duration, log io.Writer) (*soakProc, error) {
	addr, err := loopbackPort()
	if err != nil {
		return nil, err
	}
	return &soakProc{name: name, bin: bin, args: args, addr: addr, url: "http://" + addr, logDir: logDir,
		downFor: downFor, log: log, upCond: make(chan struct{}), done: make(chan struct{})}, nil
}

// loopbackPort picks a free loopback port below the usual ephemeral
// range, so no client connection holds it when the process binds it
// again after a restart.
func loopbackPort() (string, error) {
	for range 200 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(20000+rand.IntN(12000)))
		l, err := net.Listen("tcp", addr)
		if err == nil {
			return addr, l.Close()
		}
	}
	return "", errors.New("no free loopback port in 20000-32000")
}

// state is the process's generation and whether it is up: a request
// that saw the same generation, up, before and after was answered by
// one run of the process that nobody killed.
func (p *soakProc) state() (gen int, up bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gen, p.up
}

// exitsWithin reports whether the run of generation gen ends within d:
// a request it broke off as it died fails a moment before its exit is
// seen.
func (p *soakProc) exitsWithin(gen int, d time.Duration) bool {
	p.mu.Lock()
	exited := p.exited
	changed := p.gen != gen
	p.mu.Unlock()
	if changed || exited == nil {
		return changed
	}
	select {
	case <-exited:
		return true
	case <-time.After(d):
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.gen != gen
	}
}

func (p *soakProc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil || !p.up {
		return 0
	}
	return p.cmd.Process.Pid
}

// keep runs the process until stop: it starts it, and starts it again
// whenever it exits. It returns once the first start failed or the
// process was stopped.
func (p *soakProc) keep(ctx context.Context, started chan<- error) {
	defer close(p.done)
	first := true
	for {
		err := p.startOnce(ctx)
		if first {
			started <- err
			first = false
			if err != nil {
				return
			}
		}
		if err != nil {
			// A failed restart is a crash of its own (counted in
			// startOnce when the process exited); try again shortly.
			fmt.Fprintf(p.log, "  %s did not start again: %v\n", p.name, err)
			if !p.pause(ctx, 2*time.Second) {
				return
			}
			continue
		}
		p.mu.Lock()
		exited := p.exited
		p.mu.Unlock()
		<-exited
		p.mu.Lock()
		stopping, killed := p.stopping, p.killing
		p.mu.Unlock()
		if stopping {
			return
		}
		if killed && !p.pause(ctx, p.downFor) {
			return
		}
	}
}

// pause waits d unless the soak is stopping; false if it is.
func (p *soakProc) pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.stopping
}

// startOnce starts the process and waits until it prints its address.
func (p *soakProc) startOnce(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := p.tryStart(ctx)
		if err == nil || !errors.Is(err, errAddrInUse) || attempt >= 30 {
			return err
		}
		// The port is still held (by the previous run's sockets): wait.
		time.Sleep(time.Second)
	}
}

var errAddrInUse = errors.New("address already in use")

func (p *soakProc) tryStart(ctx context.Context) error {
	p.mu.Lock()
	p.starts++
	n := p.starts
	p.mu.Unlock()
	logPath := filepath.Join(p.logDir, fmt.Sprintf("%s-%d.log", p.name, n))
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	args := append([]string{p.args[0], "--listen", p.addr}, p.args[1:]...)
	cmd := exec.Command(p.bin, args...)
	cmd.Stderr = logFile
	cmd.SysProcAttr = soakSysProcAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return err
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return err
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		logFile.Close()
		close(exited)
	}()
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.Contains(sc.Text(), "listening on ") {
				close(listening)
				signalled = true
			}
		}
	}()
	select {
	case <-listening:
	case <-exited:
		log, _ := os.ReadFile(logPath)
		if strings.Contains(string(log), "address already in use") {
			return errAddrInUse
		}
		p.noteCrash(fmt.Sprintf("exited before listening: %v", waitErr), logPath)
		return fmt.Errorf("%s exited before listening: %v (log %s)", p.name, waitErr, logPath)
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		<-exited
		p.noteStalledStart(logPath)
		return fmt.Errorf("%s did not listen within 3 minutes (log %s)", p.name, logPath)
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-exited
		return ctx.Err()
	}
	p.mu.Lock()
	p.cmd, p.exited, p.killing = cmd, exited, false
	p.gen++
	if p.stopping {
		// The soak ended while this run started: stop it at once;
		// keep returns once it has exited.
		_ = cmd.Process.Signal(os.Interrupt)
	} else {
		p.up = true
		close(p.upCond)
		p.upCond = make(chan struct{})
	}
	p.mu.Unlock()
	go func() {
		<-exited
		p.mu.Lock()
		p.gen++
		p.up = false
		crashed := !p.killing && !p.stopping
		p.mu.Unlock()
		if crashed {
			p.noteCrash(fmt.Sprint(waitErr), logPath)
		}
	}()
	return nil
}

// noteStalledStart counts a start that did not reach its listener in
// time: no crash (the soak killed it), but a node a supervisor would take
// for dead.
func (p *soakProc) noteStalledStart(logPath string) {
	p.mu.Lock()
	p.stalled++
	p.mu.Unlock()
	fmt.Fprintf(p.log, "STALLED START: %s did not listen within 3 minutes and was killed; log in %s\n", p.name, logPath)
}

// noteCrash counts an exit the soak did not cause and prints the first
// lines of its report.
func (p *soakProc) noteCrash(status, logPath string) {
	excerpt := crashExcerpt(logPath, 30)
	p.mu.Lock()
	p.crashes = append(p.crashes, soakCrash{at: time.Now(), status: status, logPath: logPath, excerpt: excerpt})
	p.mu.Unlock()
	fmt.Fprintf(p.log, "CRASH: %s exited on its own (%s); whole log in %s; it begins:\n%s\n", p.name, status, logPath, indent(excerpt))
}

// crashExcerpt is n lines of a log from the first line of a Go runtime
// report (fatal error, panic, signal), or its last n lines when it has
// none.
func crashExcerpt(path string, n int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	from := max(len(lines)-n, 0)
	for i, l := range lines {
		if slices.ContainsFunc(crashMarkers, func(m string) bool { return strings.HasPrefix(l, m) }) {
			from = i
			break
		}
	}
	return strings.Join(lines[from:min(from+n, len(lines))], "\n")
}

// crashMarkers begin the lines a Go runtime's crash report starts with;
// a heap corruption report starts with the runtime's lines naming the
// object, before its fatal error.
var crashMarkers = []string{"panic: ", "fatal error: ", "runtime: ", "SIGSEGV", "SIGABRT", "SIGBUS", "SIGQUIT", "unexpected signal", "unexpected fault"}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }

// kill SIGKILLs the process if it is up; keep starts it again after
// downFor.
func (p *soakProc) kill() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.up || p.stopping {
		return false
	}
	p.killing = true
	p.up = false
	p.gen++
	p.kills++
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	return true
}

// waitUp waits until the process is up, for at most limit.
func (p *soakProc) waitUp(ctx context.Context, limit time.Duration) error {
	deadline := time.After(limit)
	for {
		p.mu.Lock()
		up, ch := p.up, p.upCond
		p.mu.Unlock()
		if up {
			return nil
		}
		select {
		case <-ch:
		case <-p.done:
			return fmt.Errorf("%s is not running", p.name)
		case <-deadline:
			return fmt.Errorf("%s not up within %v", p.name, limit)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stop ends the process with SIGINT, as an operator would, and waits for
// it (SIGKILL after limit). An exit other than a clean one is a crash.
func (p *soakProc) stop(limit time.Duration) {
	p.mu.Lock()
	p.stopping = true
	cmd, exited, up := p.cmd, p.exited, p.up
	p.up = false
	p.gen++
	p.mu.Unlock()
	if cmd == nil || exited == nil {
		return
	}
	select {
	case <-exited:
		<-p.done
		return
	default:
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-exited
		p.noteCrash(fmt.Sprintf("did not stop within %v of SIGINT", limit), filepath.Join(p.logDir, fmt.Sprintf("%s-%d.log", p.name, p.starts)))
	}
	<-p.done
	if up && cmd.ProcessState != nil && !cmd.ProcessState.Success() {
		p.noteCrash(fmt.Sprintf("%v after SIGINT", cmd.ProcessState), filepath.Join(p.logDir, fmt.Sprintf("%s-%d.log", p.name, p.starts)))
	}
}

func (p *soakProc) counts() (starts, kills int, crashes []soakCrash) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts, p.kills, append([]soakCrash(nil), p.crashes...)
}

// stalledStarts is how many starts were killed for not listening in time.
func (p *soakProc) stalledStarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stalled
}
