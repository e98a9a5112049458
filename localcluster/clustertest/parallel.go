package clustertest

import "sync"

// Parallel runs fn(0), …, fn(n-1) on 8 goroutines (the API objects of a scale test
// are created this way) and returns the first error; a goroutine stops at its first.
func Parallel(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}
