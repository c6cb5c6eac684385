package labgrid

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/wirebench/wirebench/internal/labgrid/lgpb"
)

// Client is a session with a labgrid coordinator: its client stream keeps
// a copy of the places and resources, and the place calls go through it.
// The coordinator records what this connection acquires under Name.
type Client struct {
	addr string
	name string
	cc   *grpc.ClientConn
	api  lgpb.CoordinatorClient
	st   lgpb.Coordinator_ClientStreamClient
	stop context.CancelFunc

	smu sync.Mutex // serialises sends on st

	mu        sync.Mutex
	places    map[string]*lgpb.Place
	resources map[string]*lgpb.Resource // by "exporter/group/class/name"
	syncs     map[uint64]chan struct{}
	nextSync  uint64
	changed   chan struct{} // closed (and replaced) on every update
	done      chan struct{} // closed when the stream ends
	err       error         // why it ended
}

// Dial connects to the coordinator at addr (host:port) as name
// ("host/user", see UserName), subscribes to places and resources and
// waits until it has them all.
func Dial(ctx context.Context, addr, name string) (*Client, error) {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("labgrid coordinator %s: %w", addr, err)
	}
	sctx, stop := context.WithCancel(context.Background())
	c := &Client{addr: addr, name: name, cc: cc, api: lgpb.NewCoordinatorClient(cc), stop: stop,
		places: map[string]*lgpb.Place{}, resources: map[string]*lgpb.Resource{}, syncs: map[uint64]chan struct{}{},
		changed: make(chan struct{}), done: make(chan struct{})}
	// The stream lives as long as the client, not ctx; but opening it
	// waits for the connection, which ctx bounds.
	opened := make(chan error, 1)
	go func() {
		var err error
		c.st, err = c.api.ClientStream(sctx)
		opened <- err
	}()
	select {
	case err = <-opened:
	case <-ctx.Done():
		c.Close()
		<-opened
		return nil, fmt.Errorf("connecting to the labgrid coordinator %s: %w", addr, ctx.Err())
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("labgrid coordinator %s: %s", addr, statusText(err))
	}
	go c.recv()
	for _, m := range []*lgpb.ClientInMessage{
		{Kind: &lgpb.ClientInMessage_Startup{Startup: &lgpb.StartupDone{Version: "wirebench", Name: name}}},
		{Kind: &lgpb.ClientInMessage_Subscribe{Subscribe: &lgpb.Subscribe{Kind: &lgpb.Subscribe_AllPlaces{AllPlaces: true}}}},
		{Kind: &lgpb.ClientInMessage_Subscribe{Subscribe: &lgpb.Subscribe{Kind: &lgpb.Subscribe_AllResources{AllResources: true}}}},
	} {
		if err := c.send(m); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.Sync(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Name is the "host/user" the coordinator knows this client as.
func (c *Client) Name() string { return c.name }

func (c *Client) send(m *lgpb.ClientInMessage) error {
	c.smu.Lock()
	defer c.smu.Unlock()
	if err := c.st.Send(m); err != nil {
		if errors.Is(err, io.EOF) {
			<-c.done // the real error comes with Recv
			return c.streamErr()
		}
		return fmt.Errorf("labgrid coordinator %s: %s", c.addr, statusText(err))
	}
	return nil
}

// recv applies the coordinator's updates until the stream ends.
func (c *Client) recv() {
	for {
		m, err := c.st.Recv()
		if err != nil {
			c.mu.Lock()
			c.err = err
			close(c.done)
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		for _, u := range m.GetUpdates() {
			c.applyLocked(u)
		}
		if s := m.Sync; s != nil {
			if ch, ok := c.syncs[s.GetId()]; ok {
				close(ch)
				delete(c.syncs, s.GetId())
			}
		}
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
}

func (c *Client) applyLocked(u *lgpb.UpdateResponse) {
	switch k := u.Kind.(type) {
	case *lgpb.UpdateResponse_Place:
		c.places[k.Place.GetName()] = k.Place
	case *lgpb.UpdateResponse_DelPlace:
		delete(c.places, k.DelPlace)
	case *lgpb.UpdateResponse_Resource:
		r := k.Resource
		c.resources[ResourcePath(r.GetPath(), r.GetCls())] = r
	case *lgpb.UpdateResponse_DelResource:
		p := k.DelResource
		prefix := p.GetExporterName() + "/" + p.GetGroupName() + "/"
		for key := range c.resources {
			if strings.HasPrefix(key, prefix) && strings.HasSuffix(key, "/"+p.GetResourceName()) && strings.Count(key[len(prefix):], "/") == 1 {
				delete(c.resources, key)
			}
		}
	}
}

// ResourcePath is a resource's "exporter/group/class/name", the form a
// place lists its acquired resources in.
func ResourcePath(p *lgpb.Resource_Path, cls string) string {
	return strings.Join([]string{p.GetExporterName(), p.GetGroupName(), cls, p.GetResourceName()}, "/")
}

func (c *Client) streamErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil || errors.Is(c.err, io.EOF) {
		return fmt.Errorf("labgrid coordinator %s closed the connection", c.addr)
	}
	return fmt.Errorf("labgrid coordinator %s: %s", c.addr, statusText(c.err))
}

// Sync waits until the coordinator has handled everything sent before and
// its updates up to then have arrived.
func (c *Client) Sync(ctx context.Context) error {
	c.mu.Lock()
	c.nextSync++
	id := c.nextSync
	ch := make(chan struct{})
	c.syncs[id] = ch
	c.mu.Unlock()
	if err := c.send(&lgpb.ClientInMessage{Kind: &lgpb.ClientInMessage_Sync{Sync: &lgpb.Sync{Id: id}}}); err != nil {
		return err
	}
	select {
	case <-ch:
		return nil
	case <-c.done:
		return c.streamErr()
	case <-ctx.Done():
		return fmt.Errorf("waiting for the labgrid coordinator %s: %w", c.addr, ctx.Err())
	}
}

// Place returns the place called name (or having it as an alias), nil if
// there is none.
func (c *Client) Place(name string) *lgpb.Place {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.placeLocked(name)
}

func (c *Client) placeLocked(name string) *lgpb.Place {
	if p, ok := c.places[name]; ok {
		return p
	}
	for _, p := range c.places {
		for _, a := range p.GetAliases() {
			if a == name {
				return p
			}
		}
	}
	return nil
}

// HeldError is the answer when someone else holds the place.
type HeldError struct {
	Place  string
	Holder string // "host/user"
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("labgrid place %s is acquired by %s; it is free again once they run labgrid-client -p %s release", e.Place, e.Holder, e.Place)
}

// Acquire acquires the place called name. mine is true when this user on
// this host held it already (acquired with labgrid-client beforehand): it
// is used as it is and should not be released by us. Someone else holding
// it is a *HeldError.
func (c *Client) Acquire(ctx context.Context, name string) (place string, mine bool, err error) {
	p := c.Place(name)
	if p == nil {
		return "", false, fmt.Errorf("no labgrid place %q on the coordinator %s (labgrid-client places lists them)", name, c.addr)
	}
	place = p.GetName()
	if h := p.GetAcquired(); h != "" {
		if h == c.name {
			return place, true, nil
		}
		return place, false, &HeldError{Place: place, Holder: h}
	}
	if _, err := c.api.AcquirePlace(ctx, &lgpb.AcquirePlaceRequest{Placename: place}); err != nil {
		if status.Code(err) == codes.FailedPrecondition && c.Sync(ctx) == nil {
			if h := c.Place(place).GetAcquired(); h != "" && h != c.name {
				return place, false, &HeldError{Place: place, Holder: h}
			}
		}
		return place, false, fmt.Errorf("acquire labgrid place %s: %s", place, statusText(err))
	}
	if err := c.Sync(ctx); err != nil {
		return place, false, err
	}
	return place, false, nil
}

// Release releases the place if this client's user holds it.
func (c *Client) Release(ctx context.Context, place string) error {
	from := c.name
	if _, err := c.api.ReleasePlace(ctx, &lgpb.ReleasePlaceRequest{Placename: place, Fromuser: &from}); err != nil {
		return fmt.Errorf("release labgrid place %s: %s", place, statusText(err))
	}
	return nil
}

// Close ends the stream and the connection.
func (c *Client) Close() error {
	c.stop()
	return c.cc.Close()
}

// statusText is a gRPC error as its code and message, without the
// "rpc error:" prefix.
func statusText(err error) string {
	if s, ok := status.FromError(err); ok {
		return fmt.Sprintf("%s (%s)", s.Message(), s.Code())
	}
	return err.Error()
}
