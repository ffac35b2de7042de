package benchcompare

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// row is one benchmark's medians in one unit, as benchstat's csv gives
// them.
type row struct {
	unit       string // "sec/op", "B/op", ...
	name       string // "Spec/pages=100-2"
	base, work float64
	delta      string // "-51.20%", or "~" when not significant
}

// parseCSV reads benchstat -format csv of two inputs: tables of a header
// row (",base,,work,,,"), a unit row (",sec/op,CI,sec/op,CI,vs base,P") and
// a row per benchmark, with configuration lines between them.
func parseCSV(b []byte) ([]row, error) {
	r := csv.NewReader(strings.NewReader(string(b)))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	var rows []row
	unit := ""
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		switch {
		case len(rec) < 7:
			// A configuration line, or a table of one input.
		case rec[0] == "" && rec[2] == "CI":
			unit = rec[1]
		case rec[0] == "" || rec[0] == "geomean" || unit == "":
		default:
			base, err1 := strconv.ParseFloat(rec[1], 64)
			work, err2 := strconv.ParseFloat(rec[3], 64)
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("%s %s: %w", rec[0], unit, err)
			}
			rows = append(rows, row{unit: unit, name: rec[0], base: base, work: work, delta: rec[5]})
		}
	}
}

// ratioUnits are the units whose ratios are printed, in order.
var ratioUnits = []string{"sec/op", "B/op", "allocs/op"}

// writeRatios prints, per benchmark, base ÷ work in each of ratioUnits,
// then each benchmark's growth from its smallest size to its largest in
// each tree.
func writeRatios(w io.Writer, rows []row) {
	byUnit := map[string]map[string]row{}
	var names []string
	for _, r := range rows {
		if byUnit[r.unit] == nil {
			byUnit[r.unit] = map[string]row{}
		}
		byUnit[r.unit][r.name] = r
		if r.unit == ratioUnits[0] {
			names = append(names, r.name)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "base ÷ work (2.00× is twice as fast, or half the memory; ~ is no significant difference, by benchstat)")
	fmt.Fprintf(tw, "\t%s\t\n", strings.Join(ratioUnits, "\t"))
	for _, n := range names {
		cells := []string{n}
		for _, u := range ratioUnits {
			r, ok := byUnit[u][n]
			cells = append(cells, ratioCell(r, ok))
		}
		fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
	}
	tw.Flush()

	gs := growths(byUnit[ratioUnits[0]], names)
	if len(gs) == 0 {
		return
	}
	fmt.Fprintln(w, "\ngrowth from the smallest size to the largest, sec/op (linear is the ratio of the sizes)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tsizes\tbase\twork\t\n")
	for _, g := range gs {
		fmt.Fprintf(tw, "%s\t%s\t%.2f×\t%.2f×\t\n", g.name, g.sizes, g.base, g.work)
	}
	tw.Flush()
}

func ratioCell(r row, ok bool) string {
	switch {
	case !ok:
		return "-"
	case r.work == 0 && r.base == 0:
		return "1.00×"
	case r.work == 0:
		return "∞"
	}
	cell := fmt.Sprintf("%.2f×", r.base/r.work)
	if r.delta == "~" {
		cell += " ~"
	}
	return cell
}

// sized is a benchmark name with a size parameter ("Spec/pages=100-2"):
// the benchmark, the parameter, the size and the GOMAXPROCS suffix.
var sized = regexp.MustCompile(`^(.*)/(\w+)=(\d+)(-\d+)?$`)

type growth struct {
	name, sizes string
	base, work  float64
}

// growths pairs each sized benchmark's smallest and largest size.
func growths(rows map[string]row, names []string) []growth {
	type size struct {
		n int
		r row
	}
	groups := map[string][]size{}
	var keys []string
	for _, name := range names {
		m := sized.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[3])
		if err != nil {
			continue
		}
		key := m[1] + "/" + m[2]
		if groups[key] == nil {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], size{n, rows[name]})
	}
	var out []growth
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		slices.SortFunc(g, func(a, b size) int { return a.n - b.n })
		lo, hi := g[0], g[len(g)-1]
		if lo.r.base == 0 || lo.r.work == 0 {
			continue
		}
		out = append(out, growth{name: k, sizes: fmt.Sprintf("%d → %d", lo.n, hi.n),
			base: hi.r.base / lo.r.base, work: hi.r.work / lo.r.work})
	}
	return out
}
