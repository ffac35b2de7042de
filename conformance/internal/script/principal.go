package script

import (
	"fmt"
	"strings"

	"github.com/prickle-dev/prickle/spec/world"
)

// ResolvePrincipal turns a principal as scripts write it into a bearer
// token: "agent:OWNER/NAME", "runner:OWNER/NAME" (the runner paired to
// that agent) or "runner:RUNNER-ID", "none" (no Authorization header), or
// anything else, taken as the token itself (a credential saved earlier).
func ResolvePrincipal(tokens []world.Token, p string) (string, error) {
	if p == "none" {
		return "", nil
	}
	k, who, ok := strings.Cut(p, ":")
	kind := world.TokenKind(k)
	if !ok || (kind != world.KindAgent && kind != world.KindRunner) {
		if p == "" {
			return "", fmt.Errorf("empty principal (an unset variable?)")
		}
		return p, nil
	}
	for _, t := range tokens {
		if t.Kind != kind {
			continue
		}
		if t.Agent == who || (kind == world.KindRunner && t.Runner == who) {
			return t.Token, nil
		}
	}
	return "", fmt.Errorf("no %s token for %q in this world", kind, who)
}
