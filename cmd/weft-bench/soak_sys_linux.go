package main

import "syscall"

// soakSysProcAttr puts the soak's processes in their own process group,
// so a Ctrl-C at the terminal reaches only weft-bench (which then stops
// them itself instead of seeing them exit as crashes), and has the
// kernel kill them if weft-bench dies.
func soakSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
