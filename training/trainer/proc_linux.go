package trainer

import "syscall"

// withParentDeath kills the command when the trainer dies, so a killed
// trainer leaves no command working on a job it no longer holds.
func withParentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
