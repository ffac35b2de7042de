package benchcompare

// Bench is one benchmark of the suite: where it lives in the work tree,
// and where it lived before, for a base that predates a rename or a move.
type Bench struct {
	Loc
	// Was lists the benchmark's earlier homes, newest first. A base tree
	// runs the first of Loc and Was that it has, and its results are
	// reported under Loc's name, so that the two trees' rows pair up.
	Was []Loc
}

// Loc is a benchmark function in a package.
type Loc struct {
	Pkg  string // the package's directory in the module, slash-separated: "spec"
	Func string // "BenchmarkSpec"
}

func (l Loc) String() string { return "./" + l.Pkg + "." + l.Func }

// Suite is what make bench-compare runs: the generator's path from pages
// to files, each at 100 and 1,000 pages (or tools).
var Suite = []Bench{
	{Loc: Loc{"spec", "BenchmarkSpec"}},
	{Loc: Loc{"spec", "BenchmarkLint"}},
	{Loc: Loc{"gen", "BenchmarkGenerate"}},
	{Loc: Loc{"gen", "BenchmarkGeneratePipeline"}},
}
