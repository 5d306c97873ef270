//go:build unix

package trainer

import (
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// ownGroup starts the command in a process group of its own, so the
// shell and everything it started are stopped together.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	withParentDeath(cmd.SysProcAttr)
}

// stopper returns a function that sends the group SIGTERM and, after
// grace, SIGKILL; calling it again does nothing.
func stopper(cmd *exec.Cmd, grace time.Duration) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			pgid := cmd.Process.Pid
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			go func() {
				time.Sleep(grace)
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}()
		})
	}
}
