package bundle

import "slices"

// Hunk replaces a[A0:A1] with b[B0:B1].
type Hunk struct{ A0, A1, B0, B1 int }

// Hunks is Myers' diff of a and b, as maximal hunks in ascending order, or false
// when the edit distance (elements deleted plus inserted) exceeds maxD. It costs
// O((len(a)+len(b))·D) compares for D elements changed.
func Hunks[T comparable](a, b []T, maxD int) ([]Hunk, bool) {
	return HunksFunc(len(a), len(b), func(i, j int) bool { return a[i] == b[j] }, maxD)
}

// HunksFunc is Hunks of sequences of n and m elements that same compares (element
// i of the first with element j of the second), for elements a caller does not
// hold as slices.
func HunksFunc(n, m int, same func(i, j int) bool, maxD int) ([]Hunk, bool) {
	maxD = min(maxD, n+m)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int // v before step d, for diagonals -d-1 … d+1
	for d := 0; d <= maxD; d++ {
		trace = append(trace, slices.Clone(v[off-d-1:off+d+2]))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && same(x, y) {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m), true
			}
		}
	}
	return nil, false
}

// backtrack walks the Myers trace from the end and groups the deleted and
// inserted lines into hunks, in ascending order.
func backtrack(trace [][]int, x, y int) []Hunk {
	var hs []Hunk
	add := func(ax, bx int, del bool) {
		// Extends the hunk being built backwards when adjacent.
		if n := len(hs); n > 0 {
			h := &hs[n-1]
			if del && ax+1 == h.A0 && bx == h.B0 {
				h.A0 = ax
				return
			}
			if !del && bx+1 == h.B0 && ax == h.A0 {
				h.B0 = bx
				return
			}
		}
		if del {
			hs = append(hs, Hunk{ax, ax + 1, bx, bx})
		} else {
			hs = append(hs, Hunk{ax, ax, bx, bx + 1})
		}
	}
	for d := len(trace) - 1; d > 0; d-- {
		v, off := trace[d], d+1
		k := x - y
		var pk int
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v[off+pk]
		py := px - pk
		for x > px && y > py {
			x--
			y--
		}
		if x == px {
			add(x, py, false) // b[py] inserted before a[x]
		} else {
			add(px, y, true) // a[px] deleted
		}
		x, y = px, py
	}
	for i, j := 0, len(hs)-1; i < j; i, j = i+1, j-1 {
		hs[i], hs[j] = hs[j], hs[i]
	}
	return hs
}
