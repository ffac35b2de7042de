package main

import (
	"flag"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the txtar goldens with the actual output")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"prickle-gen": main,
	})
}

// TestScripts runs the golden scripts in testdata/script: the CLI contract
// of spec, lint, fmt and the other subcommands. Run with -update to rewrite
// the goldens after an intended change, then review the diff.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			env.Setenv("REPO", wd+"/../..")
			return nil
		},
	})
}
