package conformance

import (
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
)

// KeepCallsApart makes every try of a script's concurrently count as not
// overlapped on the wire, as on a machine that kept the calls apart,
// until t ends. Not for parallel tests.
func KeepCallsApart(t *testing.T) {
	old := script.Overlapped
	script.Overlapped = func([]*wire.AtOnce) bool { return false }
	t.Cleanup(func() { script.Overlapped = old })
}

// ShortEvidence reports whether r was skipped because its concurrently
// tries did not overlap on the wire.
func ShortEvidence(r *Result) bool {
	return r.Status == Skip && strings.HasPrefix(r.Reason, script.ShortEvidence+":")
}
