package traceapi

// distinct returns vals without repeats, each where it first appears.
func distinct[T comparable](vals []T) []T {
	seen := make(map[T]bool, len(vals))
	out := make([]T, 0, len(vals))
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
