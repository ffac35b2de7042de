package validation

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/message"
)

// The words of a violation, one function per failing keyword. Both ways a
// value is validated word violations here: a compiled schema (wording
// reads the library's error kinds) and the validators prickle-gen
// generates (package rt calls these), so that a refusal reads the same
// either way. Values quoted from an instance are cut to MaxQuoted characters.

// TypeMessage words a "type" violation: got is the value's JSON type
// (null, boolean, number, string, array, object), want the types the
// schema allows, in the order null, boolean, number, integer, string,
// array, object.
func TypeMessage(got string, want []string) string {
	return Printer.Sprintf("got %s, want %s", got, strings.Join(want, " or "))
}

// ConstMessage words a "const" violation; want is the constant decoded as
// DecodeNumbers decodes (numbers as json.Number).
func ConstMessage(want any) string {
	switch want.(type) {
	case []any, map[string]any:
		return Printer.Sprintf("'const' failed")
	}
	return Printer.Sprintf("value must be %s", display(want))
}

// EnumMessage words an "enum" violation; want are the values, decoded as
// for ConstMessage.
func EnumMessage(want []any) string {
	for _, v := range want {
		switch v.(type) {
		case []any, map[string]any:
			return Printer.Sprintf("'enum' failed")
		}
	}
	if len(want) == 1 {
		return Printer.Sprintf("value must be %s", display(want[0]))
	}
	parts := make([]string, len(want))
	for i, v := range want {
		parts[i] = display(v)
	}
	return Printer.Sprintf("value must be one of %s", strings.Join(parts, ", "))
}

// FormatMessage words a "format" violation of the string got; err says
// what is wrong with it.
func FormatMessage(got, format string, err error) string {
	return Printer.Sprintf("%s is not valid %s: %v", quote(Cut(got)), format, errorText(err))
}

// errorText is an error's message, localized when the error can be.
func errorText(err error) string {
	if le, ok := err.(interface {
		LocalizedError(*message.Printer) string
	}); ok {
		return le.LocalizedError(Printer)
	}
	return err.Error()
}

// PatternMessage words a "pattern" violation of the string got.
func PatternMessage(got, pattern string) string {
	return Printer.Sprintf("%s does not match pattern %s", quote(Cut(got)), quote(pattern))
}

// MinLengthMessage and MaxLengthMessage word a length bound's violation;
// lengths count code points.
func MinLengthMessage(got, want int) string {
	return fmt.Sprintf("minLength: got %d characters, want at least %d", got, want)
}

// MaxLengthMessage: see MinLengthMessage.
func MaxLengthMessage(got, want int) string {
	return fmt.Sprintf("maxLength: got %d characters, want at most %d", got, want)
}

// MinItemsMessage words a "minItems" violation.
func MinItemsMessage(got, want int) string {
	return fmt.Sprintf("minItems: got %d items, want at least %d", got, want)
}

// MaxItemsMessage words a "maxItems" violation.
func MaxItemsMessage(got, want int) string {
	return fmt.Sprintf("maxItems: got %d items, want at most %d", got, want)
}

// MinPropertiesMessage words a "minProperties" violation.
func MinPropertiesMessage(got, want int) string {
	return fmt.Sprintf("minProperties: got %d properties, want at least %d", got, want)
}

// MaxPropertiesMessage words a "maxProperties" violation.
func MaxPropertiesMessage(got, want int) string {
	return fmt.Sprintf("maxProperties: got %d properties, want at most %d", got, want)
}

// MinimumMessage words a "minimum" violation; the other numeric bounds
// have functions of their own. A bound's message says which way it goes.
func MinimumMessage(got, want *big.Rat) string {
	return fmt.Sprintf("minimum: got %s, want at least %s", rat(got), rat(want))
}

// MaximumMessage words a "maximum" violation.
func MaximumMessage(got, want *big.Rat) string {
	return fmt.Sprintf("maximum: got %s, want at most %s", rat(got), rat(want))
}

// ExclusiveMinimumMessage words an "exclusiveMinimum" violation.
func ExclusiveMinimumMessage(got, want *big.Rat) string {
	return fmt.Sprintf("exclusiveMinimum: got %s, want more than %s", rat(got), rat(want))
}

// ExclusiveMaximumMessage words an "exclusiveMaximum" violation.
func ExclusiveMaximumMessage(got, want *big.Rat) string {
	return fmt.Sprintf("exclusiveMaximum: got %s, want less than %s", rat(got), rat(want))
}

// MultipleOfMessage words a "multipleOf" violation.
func MultipleOfMessage(got, want *big.Rat) string {
	return fmt.Sprintf("multipleOf: got %s, want a multiple of %s", rat(got), rat(want))
}

// RequiredMessage words a "required" violation: the missing names, in the
// order "required" lists them.
func RequiredMessage(missing []string) string {
	if len(missing) == 1 {
		return Printer.Sprintf("missing property %s", quote(missing[0]))
	}
	return Printer.Sprintf("missing properties %s", joinQuoted(missing))
}

// DependentRequiredMessage words a "dependentRequired" violation: prop is
// present, missing are the names it requires that are not.
func DependentRequiredMessage(prop string, missing []string) string {
	return Printer.Sprintf("properties %s required, if %s exists", joinQuoted(missing), quote(prop))
}

// AdditionalPropertiesMessage words an "additionalProperties": false
// violation. The names are listed in byte order, so that the message does
// not depend on the order an object or a map gives them.
func AdditionalPropertiesMessage(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	return Printer.Sprintf("additional properties %s not allowed", joinQuoted(names))
}

// PropertyNamesMessage words a name that fails "propertyNames".
func PropertyNamesMessage(name string) string {
	return Printer.Sprintf("invalid propertyName %s", quote(name))
}

// UniqueItemsMessage words a "uniqueItems" violation: the items at i and j
// (i < j, the first such pair) are equal.
func UniqueItemsMessage(i, j int) string {
	return Printer.Sprintf("items at %d and %d are equal", i, j)
}

// ContainsMessage words a "contains" violation of an empty array.
func ContainsMessage() string { return Printer.Sprintf("no items match contains schema") }

// MinContainsMessage words a "minContains" violation: matched are the
// indexes of the items that match "contains".
func MinContainsMessage(matched []int, want int) string {
	if len(matched) == 0 {
		return Printer.Sprintf("min %d items required to match contains schema, but none matched", want)
	}
	return Printer.Sprintf("min %d items required to match contains schema, but matched %d items at %v", want, len(matched), indexes(matched))
}

// MaxContainsMessage words a "maxContains" violation.
func MaxContainsMessage(matched []int, want int) string {
	return Printer.Sprintf("max %d items required to match contains schema, but matched %d items at %v", want, len(matched), indexes(matched))
}

func indexes(is []int) string {
	s := fmt.Sprint(is)
	return s[1 : len(s)-1]
}

// OneOfMessage words a "oneOf" violation where the alternatives i and j
// (the first two) both match.
func OneOfMessage(i, j int) string {
	return Printer.Sprintf("'oneOf' failed, subschemas %d, %d matched", i, j)
}

// NotMessage words a "not" violation (its keyword is reported empty, as
// the library reports it).
func NotMessage() string { return Printer.Sprintf("'not' failed") }

// FalseMessage words the schema false, which admits no value.
func FalseMessage() string { return Printer.Sprintf("false schema") }

// quote writes s in single quotes, escaped as Go would, with double
// quotes left alone and single quotes escaped.
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}

func joinQuoted(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = quote(s)
	}
	return strings.Join(parts, ", ")
}

// display writes a schema's value in a message: a string quoted, an
// object or array as "value", anything else as %v writes it.
func display(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case []any, map[string]any:
		return "value"
	}
	return fmt.Sprintf("%v", v)
}
