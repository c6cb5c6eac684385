package htmlreport

import (
	"image"
	"math"
)

// lumaStdDev is the standard deviation of the image's luminance (0-255):
// near 0 for a blank image, tens for a drawn chart.
func lumaStdDev(img image.Image) float64 {
	b := img.Bounds()
	var n, sum, sq float64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
			n++
			sum += l
			sq += l * l
		}
	}
	if n == 0 {
		return 0
	}
	mean := sum / n
	return math.Sqrt(math.Max(0, sq/n-mean*mean))
}

// colouredShare is the share of pixels with a clear hue (the chart's data
// series; axes, grid and text are grey), 0 to 1.
func colouredShare(img image.Image) float64 {
	b := img.Bounds()
	var n, c float64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			hi := max(r, g, bl) >> 8
			lo := min(r, g, bl) >> 8
			n++
			if hi-lo > 60 {
				c++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return c / n
}
