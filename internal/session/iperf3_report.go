package session

import "github.com/wirebench/wirebench/internal/wire/iperf3"

func (cl *i3Client) report() *iperf3.Report { return nil }
