package main

import (
	"fmt"
	"runtime/debug"

	"github.com/weftdev/weft/app"
)

// stampedCommit and stampedCommitTime are set by scripts/build.sh with
// -ldflags -X when the Go toolchain cannot stamp the VCS facts itself (a
// git worktree, whose .git is a file, is not recognised). The linker
// writes them; nothing assigns them at run time.
var (
	stampedCommit     string
	stampedCommitTime string
)

// buildFacts is what a binary knows about its own build.
type buildFacts struct {
	Version   string // Weft's release (app.Version)
	Commit    string // the commit built, "unknown" outside a checkout
	Modified  bool   // the checkout had uncommitted changes
	BuildDate string // the commit's time: reproducible, unlike the clock
	GoVersion string
}

// readBuildFacts reads the facts the Go toolchain stamped into the binary.
// The commit's time stands for the build date so that two builds of one
// commit stay byte for byte the same.
func readBuildFacts() buildFacts {
	f := buildFacts{Version: app.Version, Commit: "unknown", BuildDate: "unknown"}
	if stampedCommit != "" {
		f.Commit = stampedCommit
	}
	if stampedCommitTime != "" {
		f.BuildDate = stampedCommitTime
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return f
	}
	f.GoVersion = info.GoVersion
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			f.Commit = s.Value
		case "vcs.time":
			f.BuildDate = s.Value
		case "vcs.modified":
			f.Modified = s.Value == "true"
		}
	}
	return f
}

// String is the line `weft version` prints.
func (f buildFacts) String() string {
	commit := f.Commit
	if f.Modified {
		commit += "-modified"
	}
	return fmt.Sprintf("weft %s (commit %s, built %s, %s)", f.Version, commit, f.BuildDate, f.GoVersion)
}

func versionString() string { return readBuildFacts().String() }
