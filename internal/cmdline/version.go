package cmdline

import "runtime/debug"

// Version says which build of the toolchain is running: the version of
// the prickle module when it was installed as a module (go install
// ...@v1.2.3), or is a dependency of the program at that version; else the
// VCS revision it was built from ("+dirty" when the work tree had
// changes); else "devel".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(bi)
}

// module is this toolchain's module path.
const module = "github.com/prickle-dev/prickle"

func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if bi.Main.Path != module {
		v = ""
		for _, d := range bi.Deps {
			if d.Path == module {
				v = d.Version
			}
		}
	}
	if v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}
