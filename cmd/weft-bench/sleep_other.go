//go:build !linux

package main

import "time"

// sleepUntil waits until t.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
