package store

import "testing"

// API.md 19: the fair share of an organization's limit.
func TestFairShare(t *testing.T) {
	const a, b, c = int64(1), int64(2), int64(3)
	tests := []struct {
		name     string
		limit    int
		inFlight map[int64]int
		ready    []int64
		campaign int64
		want     int
	}{
		{"alone, empty", 10, nil, []int64{a}, a, 10},
		{"alone, not listed ready yet", 10, nil, nil, a, 10},
		{"alone, some in flight", 10, map[int64]int{a: 7}, []int64{a}, a, 3},
		{"full", 10, map[int64]int{a: 10}, []int64{a, b}, b, 0},
		{"over (a lowered limit)", 10, map[int64]int{a: 12}, []int64{a, b}, b, 0},
		{"two, the big one holds all but one: the small one gets it", 10, map[int64]int{a: 9}, []int64{a, b}, b, 1},
		{"two, the big one may not take what the small one is owed", 10, map[int64]int{a: 9}, []int64{a, b}, a, 0},
		{"two, the small one is at its share: the rest is free", 10, map[int64]int{a: 2, b: 5}, []int64{a, b}, a, 3},
		{"two, both below their share", 10, map[int64]int{a: 1, b: 1}, []int64{a, b}, a, 4},
		{"three, ⌊10/3⌋ = 3 each owed", 10, map[int64]int{a: 3}, []int64{a, b, c}, a, 1},
		{"three, b and c owed 3 each", 10, nil, []int64{a, b, c}, b, 4},
		{"paused campaign's calls count", 10, map[int64]int{c: 8}, []int64{a}, a, 2},
		{"more campaigns than slots: each owed 0", 2, nil, []int64{a, b, c}, c, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total := 0
			for _, n := range tt.inFlight {
				total += n
			}
			if got := fairShare(tt.limit, total, tt.campaign, tt.inFlight, tt.ready); got != tt.want {
				t.Fatalf("fairShare = %d, want %d", got, tt.want)
			}
		})
	}
}
