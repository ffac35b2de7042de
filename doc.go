// Package prickle is the root of the Prickle toolchain's module. It holds
// no code: README.md's "What is here" lists the packages, one line each,
// and this package's test keeps that table in step with the packages and
// checks the rules of what may import what.
//
// Nothing imports it, and it imports nothing.
package prickle
