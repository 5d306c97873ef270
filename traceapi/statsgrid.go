package traceapi

import "time"

// The time grid of the bucketed statistics (/calls/stats,
// /feedback/stats): the reference's granularity steps and bounds.

// maxStatsBuckets is the most buckets one statistics answer holds; a
// narrower granularity is widened to fit.
const maxStatsBuckets = 10_000

// autoGranularity is the bucket width, in seconds, for a range of span
// when the request names none: 5 minutes up to 2 hours, an hour up to 12
// hours, 6 hours up to 3 days, 12 hours up to 14 days, a day beyond.
func autoGranularity(span time.Duration) int64 {
	switch {
	case span <= 2*time.Hour:
		return 300
	case span <= 12*time.Hour:
		return 3600
	case span <= 3*24*time.Hour:
		return 6 * 3600
	case span <= 14*24*time.Hour:
		return 12 * 3600
	}
	return 24 * 3600
}

// capGranularity widens g, when the range would hold more than
// maxStatsBuckets of it, to the narrowest width that holds it in fewer.
func capGranularity(g int64, span time.Duration) int64 {
	secs := span.Seconds()
	if secs/float64(g) <= maxStatsBuckets {
		return g
	}
	return max(g, int64(secs/maxStatsBuckets)+1)
}

// bucketOrigin is where the bucket holding t starts: t floored to a
// multiple of width seconds on loc's wall clock (its offset at t), so a
// day's buckets start at the zone's midnight and an hour's on the hour.
// In UTC, and in any zone whose offset is a multiple of width, this is the
// reference's toStartOfInterval.
func bucketOrigin(t time.Time, width int64, loc *time.Location) time.Time {
	_, offset := t.In(loc).Zone()
	local := t.Unix() + int64(offset)
	floored := local - ((local%width)+width)%width
	return time.Unix(floored-int64(offset), 0).UTC()
}
