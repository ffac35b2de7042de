package rt

import (
	"errors"

	"github.com/prickle-dev/prickle/internal/schemacompile"
)

// schemaValidator is a Validator of schema that the compiled schema
// checks (santhosh-tekuri/jsonschema through schemacompile), for tests of the
// runtime that need a schema of their own rather than a generated check.
func schemaValidator(name, schema string) *Validator {
	s, err := schemacompile.Compile("prickle:"+name, []byte(schema))
	if err != nil {
		panic(err)
	}
	return NewValidator(name, []byte(schema), func(c *Checker) {
		raw := c.Raw()
		if raw == nil {
			return
		}
		err := schemacompile.Validate(s, raw)
		var ve *ValidationError
		switch {
		case errors.As(err, &ve):
			c.failed = true
			c.run.vs = append(c.run.vs, ve.Violations...)
		case err != nil:
			c.stop(err)
		}
	})
}
