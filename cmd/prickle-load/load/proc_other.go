//go:build !linux

package load

import (
	"errors"
	"time"
)

var errNoProc = errors.New("process statistics (-pid) need Linux's /proc")

func readProcs([]int) (int64, time.Duration, int, error) { return 0, 0, 0, errNoProc }

func loadAverage() ([3]float64, error) { return [3]float64{}, errNoProc }
