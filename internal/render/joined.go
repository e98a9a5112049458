package render

// joined is the lists of runs in a row (a library's backends, one list per run of
// routes), kept with the runs it joined: the next join copies the lists of the runs
// it begins and ends with as before from it, and reads those of the runs between
// only: a change's one or two, not 780 runs' scattered lists at 50,000 routes. The
// runs are held (not their addresses), so a run is never mistaken for a new one
// made where it was.
type joined[R, T any] struct {
	runs []R
	lens []int // how many items each run brought
	list []T
}

// of is the lists of runs in a row (listOf of each), same telling a run joined last.
// The list returned is never modified.
func (j *joined[R, T]) of(runs []R, same func(a, b R) bool, listOf func(R) []T) []T {
	head, h := 0, 0
	for ; h < len(runs) && h < len(j.runs) && same(runs[h], j.runs[h]); h++ {
		head += j.lens[h]
	}
	if h == len(runs) && h == len(j.runs) && j.runs != nil {
		return j.list
	}
	tail, t := 0, 0
	for ; t < len(runs)-h && t < len(j.runs)-h && same(runs[len(runs)-1-t], j.runs[len(j.runs)-1-t]); t++ {
		tail += j.lens[len(j.lens)-1-t]
	}
	lens := make([]int, 0, len(runs))
	lens = append(lens, j.lens[:h]...)
	var between []T
	for _, r := range runs[h : len(runs)-t] {
		l := listOf(r)
		between, lens = append(between, l...), append(lens, len(l))
	}
	lens = append(lens, j.lens[len(j.lens)-t:]...)
	var list []T // (nil when empty, as the lists appended were)
	if n := head + len(between) + tail; n > 0 {
		list = make([]T, 0, n)
		list = append(append(append(list, j.list[:head]...), between...), j.list[len(j.list)-tail:]...)
	}
	j.runs, j.lens, j.list = append([]R(nil), runs...), lens, list
	return list
}

func samePointer[T any](a, b *T) bool { return a == b }
