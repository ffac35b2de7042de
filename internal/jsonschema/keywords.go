package jsonschema

import (
	"maps"
	"slices"
)

// Class says what a keyword does, after the vocabularies of JSON Schema
// 2020-12.
type Class int

// The classes of keywords.
const (
	// Unknown is a keyword 2020-12 does not define: kept as written and
	// compared whole, never interpreted.
	Unknown Class = iota
	// Meta identifies the document or declares definitions: it never
	// judges a value by itself.
	Meta
	// Reference applies the schema it names ($ref, $dynamicRef).
	Reference
	// Applicator applies subschemas to the value or its parts.
	Applicator
	// Assertion narrows the values a schema accepts.
	Assertion
	// Annotation informs a reader and never narrows.
	Annotation
)

// Form is the JSON form of a keyword's value as far as the model reads it.
type Form int

// The forms of keyword values.
const (
	FormValue      Form = iota // any JSON value, read by accessors
	FormSchema                 // one schema
	FormSchemaList             // an array of schemas
	FormSchemaMap              // an object whose member values are schemas
)

// KeywordInfo describes one keyword: the one table every reader of a
// schema consults.
type KeywordInfo struct {
	Name  string
	Class Class
	Form  Form
	// Shape marks the keywords that decide what kind of value a schema
	// describes (and so its Go type); every other keyword only narrows or
	// informs.
	Shape bool
	// Bound is +1 for an upper bound and -1 for a lower bound: lowering an
	// upper bound or raising a lower one narrows.
	Bound int
	// AbsentIsTrue marks a subschema keyword whose absence means the
	// schema true, so that absent and true compare equal.
	AbsentIsTrue bool
}

var keywordTable = func() map[string]KeywordInfo {
	m := map[string]KeywordInfo{}
	add := func(class Class, form Form, names ...string) {
		for _, n := range names {
			m[n] = KeywordInfo{Name: n, Class: class, Form: form}
		}
	}
	add(Meta, FormValue, "$schema", "$id", "$anchor", "$dynamicAnchor", "$vocabulary")
	add(Meta, FormSchemaMap, "$defs", "definitions")
	add(Reference, FormValue, "$ref", "$dynamicRef")
	add(Applicator, FormSchema, "additionalProperties", "items", "contains", "not", "if", "then", "else",
		"propertyNames", "unevaluatedItems", "unevaluatedProperties")
	add(Applicator, FormSchemaList, "allOf", "anyOf", "oneOf", "prefixItems")
	add(Applicator, FormSchemaMap, "properties", "patternProperties", "dependentSchemas")
	add(Assertion, FormValue, "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
		"exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
		"maxContains", "minContains", "maxProperties", "minProperties", "required", "dependentRequired",
		// format is an annotation in 2020-12 unless asserted; the tool
		// pages mean it as an assertion, and the validators assert it.
		"format")
	// $comment belongs to the core vocabulary, but like an annotation it
	// only informs a reader.
	add(Annotation, FormValue, "$comment", "title", "description", "default", "examples", "deprecated", "readOnly",
		"writeOnly", "contentEncoding", "contentMediaType")
	add(Annotation, FormSchema, "contentSchema")
	set := func(f func(*KeywordInfo), names ...string) {
		for _, n := range names {
			k := m[n]
			f(&k)
			m[n] = k
		}
	}
	set(func(k *KeywordInfo) { k.Shape = true }, "type", "properties", "patternProperties", "additionalProperties",
		"items", "prefixItems", "$ref", "$dynamicRef", "const", "enum", "anyOf", "oneOf", "allOf")
	set(func(k *KeywordInfo) { k.Bound = +1 }, "maxLength", "maxItems", "maxProperties", "maximum", "exclusiveMaximum", "maxContains")
	set(func(k *KeywordInfo) { k.Bound = -1 }, "minLength", "minItems", "minProperties", "minimum", "exclusiveMinimum", "minContains")
	set(func(k *KeywordInfo) { k.AbsentIsTrue = true }, "additionalProperties", "unevaluatedProperties", "items",
		"unevaluatedItems", "propertyNames")
	return m
}()

// Info returns what the model knows of the keyword name; an unknown name
// has Class Unknown and Form FormValue.
func Info(name string) KeywordInfo {
	if k, ok := keywordTable[name]; ok {
		return k
	}
	return KeywordInfo{Name: name}
}

// Table lists every keyword the model knows, sorted by name.
func Table() []KeywordInfo {
	out := make([]KeywordInfo, 0, len(keywordTable))
	for _, n := range slices.Sorted(maps.Keys(keywordTable)) {
		out = append(out, keywordTable[n])
	}
	return out
}
