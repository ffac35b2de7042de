package script

import (
	"fmt"

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
	token, ok, err := world.TokenOf(tokens, p)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w in this world", err)
	case ok:
		return token, nil
	case p == "":
		return "", fmt.Errorf("empty principal (an unset variable?)")
	}
	return p, nil
}
