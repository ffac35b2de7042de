package load

import (
	"sync"
	"time"
)

// sampler reads the resident memory and CPU time of processes and their
// descendants (readProcs) at a fixed interval, and at the start and end
// of the measured phase.
type sampler struct {
	pids []int
	n    int // processes at the last sample
	done chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	samples []Sample
	t0      time.Time     // start of the measured phase (zero before mark)
	cpu0    time.Duration // CPU time at mark
	err     error
}

// maxSamples bounds the samples kept: the interval doubles, keeping every
// other sample, when a run would keep more.
const maxSamples = 3600

func startSampler(pids []int, every time.Duration) (*sampler, error) {
	if _, _, _, err := readProcs(pids); err != nil {
		return nil, err
	}
	s := &sampler{pids: pids, done: make(chan struct{})}
	s.take()
	s.wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-tick.C:
				s.take()
				s.mu.Lock()
				if len(s.samples) >= maxSamples {
					s.samples = thin(s.samples)
					every *= 2
					tick.Reset(every)
				}
				s.mu.Unlock()
			}
		}
	})
	return s, nil
}

// thin keeps every other sample, and the first.
func thin(ss []Sample) []Sample {
	out := ss[:0]
	for i, s := range ss {
		if i%2 == 0 {
			out = append(out, s)
		}
	}
	return out
}

// take records one sample; T is relative to the measured phase's start
// (negative during the warm-up).
func (s *sampler) take() Sample {
	rss, cpu, n, err := readProcs(s.pids)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return Sample{}
	}
	s.n = n
	var t float64
	if !s.t0.IsZero() {
		t = now.Sub(s.t0).Seconds()
	} else if len(s.samples) > 0 {
		t = -1 // fixed up at mark
	}
	smp := Sample{T: t, RSS: rss, CPU: cpu.Seconds(), at: now}
	s.samples = append(s.samples, smp)
	return smp
}

// mark starts the measured phase.
func (s *sampler) mark() {
	_, cpu, _, _ := readProcs(s.pids)
	now := time.Now()
	s.mu.Lock()
	s.t0, s.cpu0 = now, cpu
	for i := range s.samples {
		s.samples[i].T = s.samples[i].at.Sub(now).Seconds()
	}
	s.mu.Unlock()
	s.take()
}

func (s *sampler) stop() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.wg.Wait()
}

// finish ends the measured phase and summarizes it.
func (s *sampler) finish() *ServerStats {
	last := s.take()
	s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &ServerStats{PIDs: s.pids, Processes: s.n, Samples: s.samples}
	if s.err != nil {
		st.Error = s.err.Error()
	}
	for _, smp := range s.samples {
		if smp.T < 0 {
			continue
		}
		if st.RSSStart == 0 {
			st.RSSStart = smp.RSS
		}
		st.RSSMax = max(st.RSSMax, smp.RSS)
	}
	st.RSSEnd = last.RSS
	st.cpu = (time.Duration(last.CPU*float64(time.Second)) - s.cpu0).Seconds()
	st.CPUSeconds = st.cpu
	return st
}
