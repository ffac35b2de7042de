package load

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// exactPercentile is the nearest-rank percentile of sorted values.
func exactPercentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = max(rank, 1)
	return sorted[rank-1]
}

func TestBucketsCoverEveryValue(t *testing.T) {
	vals := []uint64{0, 1, 127, 128, 129, 255, 256, 1000, 1 << 20, 123456789, 1<<40 + 12345, math.MaxInt64}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		vals = append(vals, r.Uint64N(math.MaxInt64))
		vals = append(vals, r.Uint64N(1<<24))
	}
	for _, v := range vals {
		i := bucketOf(v)
		if i < 0 || i >= histBuckets {
			t.Fatalf("bucketOf(%d) = %d, out of [0, %d)", v, i, histBuckets)
		}
		low, width := bucketRange(i)
		if v < low || v-low >= width {
			t.Fatalf("value %d in bucket %d = [%d, %d+%d)", v, i, low, low, width)
		}
		if width > 1 && float64(width) > float64(low)/64 {
			t.Fatalf("bucket %d [%d, +%d) wider than 1/64 of its lower bound", i, low, width)
		}
	}
	// Consecutive buckets tile the line.
	for i := 1; i < histBuckets; i++ {
		pl, pw := bucketRange(i - 1)
		l, _ := bucketRange(i)
		if pl+pw != l {
			t.Fatalf("bucket %d ends at %d, bucket %d starts at %d", i-1, pl+pw, i, l)
		}
	}
}

func TestPercentilesWithinPrecision(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dist := range []struct {
		name string
		gen  func() time.Duration
	}{
		{"uniform 100µs-2ms", func() time.Duration {
			return 100*time.Microsecond + time.Duration(r.Int64N(int64(1900*time.Microsecond)))
		}},
		{"lognormal around 300µs", func() time.Duration { return time.Duration(300e3 * math.Exp(r.NormFloat64()*0.7)) }},
		{"bimodal", func() time.Duration {
			if r.IntN(10) == 0 {
				return 20*time.Millisecond + time.Duration(r.Int64N(1e6))
			}
			return 500*time.Microsecond + time.Duration(r.Int64N(1e5))
		}},
		{"tiny exact", func() time.Duration { return time.Duration(r.IntN(100)) }},
	} {
		var h Histogram
		var vals []time.Duration
		for range 20000 {
			v := dist.gen()
			h.Record(v)
			vals = append(vals, v)
		}
		slices.Sort(vals)
		for _, p := range []float64{0.1, 1, 50, 90, 99, 99.9, 100} {
			got, want := h.Percentile(p), exactPercentile(vals, p)
			tol := float64(want) / 128
			if want < histSubCount {
				tol = 0 // exact below 128 ns
			}
			if math.Abs(float64(got-want)) > tol {
				t.Errorf("%s: p%v = %v, exact %v (tolerance %.0f ns)", dist.name, p, got, want, tol)
			}
		}
		if h.Min() != vals[0] || h.Max() != vals[len(vals)-1] || h.Count() != uint64(len(vals)) {
			t.Errorf("%s: min %v max %v count %d, want %v %v %d", dist.name, h.Min(), h.Max(), h.Count(), vals[0], vals[len(vals)-1], len(vals))
		}
		var sum time.Duration
		for _, v := range vals {
			sum += v
		}
		if h.Mean() != sum/time.Duration(len(vals)) {
			t.Errorf("%s: mean %v, want %v", dist.name, h.Mean(), sum/time.Duration(len(vals)))
		}
	}
}

func TestHistogramSmallCounts(t *testing.T) {
	var h Histogram
	if h.Percentile(50) != 0 || h.Mean() != 0 || h.Max() != 0 {
		t.Fatal("an empty histogram reports non-zero values")
	}
	h.Record(-5) // a clock step backwards counts as zero
	if h.Min() != 0 || h.Percentile(100) != 0 {
		t.Fatalf("negative latency: min %v p100 %v, want 0", h.Min(), h.Percentile(100))
	}
	var one Histogram
	one.Record(1234567 * time.Nanosecond)
	for _, p := range []float64{1, 50, 100} {
		if got := one.Percentile(p); got != 1234567 {
			t.Errorf("one value: p%v = %v, want the value itself (clamped to min/max)", p, got)
		}
	}
	// Nearest rank: of 1..4 ms, p50 is the 2nd value, p51 the 3rd.
	var four Histogram
	for i := 1; i <= 4; i++ {
		four.Record(time.Duration(i) * time.Millisecond)
	}
	near := func(got, want time.Duration) bool { return math.Abs(float64(got-want)) <= float64(want)/128 }
	if got := four.Percentile(50); !near(got, 2*time.Millisecond) {
		t.Errorf("p50 of 1..4ms = %v, want ~2ms", got)
	}
	if got := four.Percentile(51); !near(got, 3*time.Millisecond) {
		t.Errorf("p51 of 1..4ms = %v, want ~3ms", got)
	}
}

func TestMergeEqualsOneHistogram(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var all, a, b, empty Histogram
	for i := range 5000 {
		v := time.Duration(r.Int64N(int64(10 * time.Millisecond)))
		all.Record(v)
		if i%3 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	var m Histogram
	m.Merge(&empty)
	m.Merge(&a)
	m.Merge(&b)
	m.Merge(&empty)
	if m != all {
		t.Fatalf("merged histogram differs: count %d/%d min %v/%v max %v/%v", m.Count(), all.Count(), m.Min(), all.Min(), m.Max(), all.Max())
	}
}
