//go:build unix && !linux

package trainer

import "syscall"

// withParentDeath has no equivalent here: a killed trainer's command
// stops when its output pipe breaks.
func withParentDeath(*syscall.SysProcAttr) {}
