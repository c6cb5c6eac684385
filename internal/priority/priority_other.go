//go:build !linux

package priority

// raise cannot change the priority here.
func raise(nice int) Outcome {
	o := Outcome{Asked: nice}
	if nice < 0 {
		o.Err = ErrUnsupported
	}
	return o
}
