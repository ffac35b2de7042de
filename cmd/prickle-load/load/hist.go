package load

import (
	"math"
	"math/bits"
	"time"
)

// Histogram bucketing: values below 2^histSubBits nanoseconds have a bucket
// each; above, every power of two is split into 2^(histSubBits-1) equal
// buckets, so a bucket is at most 1/64 of its lower bound wide and a
// percentile read as the bucket's middle is within 0.8% of the recorded
// value. The bucket array does not grow with the number of calls.
const (
	histSubBits  = 7
	histSubCount = 1 << histSubBits // 128
	histHalf     = histSubCount / 2 // 64
	histBuckets  = histSubCount + (64-histSubBits)*histHalf
)

// Histogram records latencies in bounded memory (about 30 KiB whatever the
// number of calls). The zero value is empty and ready to use; it is not
// safe for concurrent use (each worker keeps its own, merged at the end).
type Histogram struct {
	counts   [histBuckets]uint64
	n        uint64
	sum      time.Duration
	min, max time.Duration
}

// bucketOf returns the bucket index of v >= 0 nanoseconds.
func bucketOf(v uint64) int {
	if v < histSubCount {
		return int(v)
	}
	s := bits.Len64(v) - histSubBits // >= 1
	top := v >> uint(s)              // in [64, 128)
	return histSubCount + (s-1)*histHalf + int(top-histHalf)
}

// bucketRange returns the lowest value of bucket i and its width.
func bucketRange(i int) (low, width uint64) {
	if i < histSubCount {
		return uint64(i), 1
	}
	j := i - histSubCount
	s := uint(j/histHalf + 1)
	top := uint64(j%histHalf + histHalf)
	return top << s, 1 << s
}

// Record adds one latency; a negative one counts as zero.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += d
}

// Merge adds every latency recorded in o.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of latencies recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Min and Max are the exact extremes (0 when empty).
func (h *Histogram) Min() time.Duration { return h.min }

// Max is the largest latency recorded (0 when empty).
func (h *Histogram) Max() time.Duration { return h.max }

// Mean is the exact arithmetic mean (0 when empty).
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// Percentile returns the p-th percentile (0 < p <= 100) by the
// nearest-rank method: the smallest recorded value that at least p% of the
// values are at or below, read as the middle of its bucket (clamped to the
// exact minimum and maximum). It is 0 when the histogram is empty.
func (h *Histogram) Percentile(p float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p / 100 * float64(h.n)))
	rank = max(rank, 1)
	rank = min(rank, h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			low, width := bucketRange(i)
			v := time.Duration(low + width/2)
			if width == 1 {
				v = time.Duration(low)
			}
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}
