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
		caps     map[int64]int
		want     int
	}{
		{"alone, empty", 10, nil, []int64{a}, a, nil, 10},
		{"alone, not listed ready yet", 10, nil, nil, a, nil, 10},
		{"alone, some in flight", 10, map[int64]int{a: 7}, []int64{a}, a, nil, 3},
		{"full", 10, map[int64]int{a: 10}, []int64{a, b}, b, nil, 0},
		{"over (a lowered limit)", 10, map[int64]int{a: 12}, []int64{a, b}, b, nil, 0},
		{"two, the big one holds all but one: the small one gets it", 10, map[int64]int{a: 9}, []int64{a, b}, b, nil, 1},
		{"two, the big one may not take what the small one is owed", 10, map[int64]int{a: 9}, []int64{a, b}, a, nil, 0},
		{"two, the small one is at its share: the rest is free", 10, map[int64]int{a: 2, b: 5}, []int64{a, b}, a, nil, 3},
		{"two, both below their share", 10, map[int64]int{a: 1, b: 1}, []int64{a, b}, a, nil, 4},
		{"three, ⌊10/3⌋ = 3 each owed", 10, map[int64]int{a: 3}, []int64{a, b, c}, a, nil, 1},
		{"three, b and c owed 3 each", 10, nil, []int64{a, b, c}, b, nil, 4},
		{"paused campaign's calls count", 10, map[int64]int{c: 8}, []int64{a}, a, nil, 2},
		{"more campaigns than slots: each owed 0", 2, nil, []int64{a, b, c}, c, nil, 2},
		{"a small campaign is owed no more than its max_concurrency", 10, map[int64]int{b: 1}, []int64{a, b}, a, map[int64]int{b: 2}, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total := 0
			for _, n := range tt.inFlight {
				total += n
			}
			if got := fairShare(tt.limit, total, tt.campaign, tt.inFlight, tt.ready, tt.caps); got != tt.want {
				t.Fatalf("fairShare = %d, want %d", got, tt.want)
			}
		})
	}
}
