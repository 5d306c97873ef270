// Package browsertest starts headless Chromium for tests and benchmarks
// of the web UI, through the DevTools protocol (chromedp). A missing
// browser is an error that says how to install it, never a skip.
package browsertest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// InstallHint is the command that installs the browser the tests drive.
const InstallHint = "scripts/install-chromium.sh (apt-get install chromium)"

// FindChromium returns the browser to drive: $WEFT_CHROMIUM, else the
// first of chromium, chromium-browser, google-chrome on PATH.
func FindChromium() (string, error) {
	if p := os.Getenv("WEFT_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium on PATH and WEFT_CHROMIUM unset; install it with " + InstallHint)
}

// New starts a headless browser with a fresh profile and returns a tab's
// context; it is closed when the test ends.
func New(tb testing.TB, timeout time.Duration) context.Context {
	tb.Helper()
	path, err := FindChromium()
	if err != nil {
		tb.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(tb.TempDir()), chromedp.Flag("disable-dev-shm-usage", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	tb.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// ArtifactsDir is where screenshots go: $WEFT_TEST_ARTIFACTS, else
// artifacts/webui at the repository root (ignored by git).
func ArtifactsDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("WEFT_TEST_ARTIFACTS")
	if dir == "" {
		root, err := filepath.Abs("..")
		if err != nil {
			tb.Fatal(err)
		}
		dir = filepath.Join(root, "artifacts", "webui")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// Screenshot saves the whole page as dir/name.png.
func Screenshot(ctx context.Context, tb testing.TB, dir, name string) {
	tb.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("screenshot: %s", path)
}
