//go:build !unix

package load

import "time"

func selfCPU() time.Duration { return 0 }
