//go:build !unix

package trainer

import (
	"os/exec"
	"sync"
	"time"
)

func ownGroup(*exec.Cmd) {}

// stopper kills the command; without process groups its children live on.
func stopper(cmd *exec.Cmd, _ time.Duration) func() {
	var once sync.Once
	return func() { once.Do(func() { _ = cmd.Process.Kill() }) }
}
