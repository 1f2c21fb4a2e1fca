package contacts

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// OnProblem sees every problem, those beyond MaxProblems too, in the order
// Result.Problems lists them; the cap still bounds Result.Problems.
func TestOnProblemSeesEveryProblem(t *testing.T) {
	var b strings.Builder
	b.WriteString("phone_number\n+14155550100\n")
	for range 150 {
		b.WriteString("+14155550100\n") // duplicates of row 2
	}
	b.WriteString("nope\n")
	var seen []Problem
	res, got, err := readAll(t, b.String(), Options{MaxProblems: 10, batchSize: 7, OnProblem: func(p Problem) { seen = append(seen, p) }})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(got) != 1 || res.ProblemCount != 151 || len(res.Problems) != 10 {
		t.Fatalf("contacts %d, problems %d counted / %d kept; want 1, 151 / 10", len(got), res.ProblemCount, len(res.Problems))
	}
	if len(seen) != 151 {
		t.Fatalf("OnProblem saw %d problems, want 151", len(seen))
	}
	if !reflect.DeepEqual(seen[:10], res.Problems) {
		t.Errorf("OnProblem's first problems differ from Result.Problems:\n%v\n%v", seen[:10], res.Problems)
	}
	for i, p := range seen[:150] {
		if p.Type != TypePhoneDuplicate || p.Row != i+3 {
			t.Fatalf("problem %d = %s at row %d, want %s at row %d", i, p.Type, p.Row, TypePhoneDuplicate, i+3)
		}
	}
	if last := seen[150]; last.Type != TypePhoneInvalid || last.Row != 153 {
		t.Errorf("last problem = %s at row %d, want %s at row 153", last.Type, last.Row, TypePhoneInvalid)
	}
}

// A file-level problem reaches OnProblem too.
func TestOnProblemFileLevel(t *testing.T) {
	for _, input := range []string{"", "name\nAda\n", "phone_number\n"} {
		var types []string
		res, _, err := readAll(t, input, Options{OnProblem: func(p Problem) { types = append(types, fmt.Sprint(p.Row, " ", p.Type)) }})
		if err != nil {
			t.Fatalf("%q: Read: %v", input, err)
		}
		if len(types) != res.ProblemCount || len(types) == 0 {
			t.Errorf("%q: OnProblem saw %v, Result counts %d", input, types, res.ProblemCount)
		}
	}
}
