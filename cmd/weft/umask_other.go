//go:build !unix

package main

// privateFiles does nothing where there is no umask; files keep the
// modes their creators give them.
func privateFiles() {}
