//go:build !linux

package main

import "syscall"

// soakSysProcAttr is the default elsewhere: the soak's measures (RSS,
// open files) read /proc and are Linux's anyway.
func soakSysProcAttr() *syscall.SysProcAttr { return nil }
