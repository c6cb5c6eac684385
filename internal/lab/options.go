package lab

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/internal/lab/model"
)

// Options are the flags the reflector and the relay share, as typed.
type Options struct {
	// Model is the device model's spec (model.Parse).
	Model string
	// Duration bounds the run; 0 runs until interrupted.
	Duration time.Duration
}

// check parses the model and checks the duration.
func (o Options) check() (model.Spec, error) {
	spec, err := model.Parse(o.Model)
	if err != nil {
		return spec, err
	}
	if o.Duration < 0 {
		return spec, fmt.Errorf("invalid --duration %v", o.Duration)
	}
	return spec, nil
}

// RunContext is ctx bounded by Duration; made once the socket is bound,
// so that the report's duration (from then) is never shorter than asked.
func (o Options) RunContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.Duration > 0 {
		return context.WithTimeout(ctx, o.Duration)
	}
	return context.WithCancel(ctx)
}

// ReflectOptions are the reflect command's flags, as typed.
type ReflectOptions struct {
	Options
	Port int
	Bind string // "": every address
}

// Config validates the options and returns the address to listen on and
// the model. Every error is a mistake in them.
func (o ReflectOptions) Config() (addr string, spec model.Spec, err error) {
	if spec, err = o.check(); err != nil {
		return "", spec, err
	}
	if o.Port < 0 || o.Port > 65535 {
		return "", spec, fmt.Errorf("invalid port %d", o.Port)
	}
	return net.JoinHostPort(o.Bind, strconv.Itoa(o.Port)), spec, nil
}

// RelayOptions are the relay command's flags, as typed.
type RelayOptions struct {
	Options
	Listen, To string
	Both, TCP  bool
}

// Config validates the options and builds the relay's configuration
// (without OnLog). Every error is a mistake in them.
func (o RelayOptions) Config() (RelayConfig, error) {
	spec, err := o.check()
	if err != nil {
		return RelayConfig{}, err
	}
	if o.Listen == "" || o.To == "" {
		return RelayConfig{}, fmt.Errorf("relay needs --listen ADDR:PORT and --to HOST:PORT")
	}
	for _, a := range []string{o.Listen, o.To} {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return RelayConfig{}, fmt.Errorf("invalid address %q: want HOST:PORT", a)
		}
	}
	return RelayConfig{Listen: o.Listen, To: o.To, Model: spec, ModelText: o.Model, Both: o.Both, TCP: o.TCP}, nil
}
