//go:build !netlab

package sweep_test

// exactRates: see rates_netlab_test.go.
const exactRates = false
