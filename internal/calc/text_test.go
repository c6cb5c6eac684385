package calc

import "testing"

func TestCommas(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		d    int
		want string
	}{{148809.52, 0, "148,810"}, {1488095.2, 0, "1,488,095"}, {999, 0, "999"}, {8138.0208, 2, "8,138.02"}, {-1234, 0, "-1,234"}} {
		if got := commas(tt.v, tt.d); got != tt.want {
			t.Errorf("commas(%v, %d) = %q, want %q", tt.v, tt.d, got, tt.want)
		}
	}
}
