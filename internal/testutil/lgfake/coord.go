// Package lgfake is a stand-in labgrid for tests: a coordinator serving
// the same gRPC service as labgrid's (internal/labgrid/lgpb) with places
// whose NetworkSerialPort points at a console served here over telnet
// with RFC 2217 (as ser2net serves a board's UART) or raw TCP.
//
// The coordinator behaves as labgrid's does where wirebench depends on
// it: acquisition is recorded under the "host/user" the client stream's
// startup message named, for the connection (peer) that sent it; a place
// held already is refused with FAILED_PRECONDITION "Place X is already
// acquired"; acquiring marks the place's resources acquired and publishes
// the resources and the place on every client stream; ReleasePlace with
// fromuser releases only a place that user holds.
package lgfake

import (
	"context"
	"fmt"
	"net"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/internal/labgrid"
	"github.com/wirebench/wirebench/internal/labgrid/lgpb"
)

// Coordinator is a running stand-in coordinator.
type Coordinator struct {
	lgpb.UnimplementedCoordinatorServer

	// Addr is its host:port on loopback.
	Addr string

	srv *grpc.Server

	mu        sync.Mutex
	places    map[string]*lgpb.Place
	resources map[string]*lgpb.Resource // by exporter/group/class/name
	clients   map[string]*session       // by peer address
	acquires  map[string]int            // successful AcquirePlace per place
	changed   chan struct{}
}

type session struct {
	name string
	out  chan *lgpb.ClientOutMessage
}

// Start serves a coordinator on a free loopback port until Stop.
func Start() (*Coordinator, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("coordinator listen: %w", err)
	}
	c := &Coordinator{Addr: ln.Addr().String(), srv: grpc.NewServer(), places: map[string]*lgpb.Place{},
		resources: map[string]*lgpb.Resource{}, clients: map[string]*session{}, acquires: map[string]int{}, changed: make(chan struct{})}
	lgpb.RegisterCoordinatorServer(c.srv, c)
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

// Stop ends the coordinator and its streams.
func (c *Coordinator) Stop() { c.srv.Stop() }

// AddPlace adds a place holding one NetworkSerialPort, exported as
// exporter/place/NetworkSerialPort/console, with the given console address
// and protocol ("rfc2217" or "raw"; "" leaves it out, as labgrid's exporter
// does, meaning rfc2217) at speed baud.
func (c *Coordinator) AddPlace(name, host string, port int, protocol string, baud int) {
	r := &lgpb.Resource{
		Path:  &lgpb.Resource_Path{ExporterName: proto.String("exporter"), GroupName: name, ResourceName: "console"},
		Cls:   "NetworkSerialPort",
		Avail: true,
		Params: map[string]*lgpb.MapValue{
			"host":  {Kind: &lgpb.MapValue_StringValue{StringValue: host}},
			"port":  {Kind: &lgpb.MapValue_IntValue{IntValue: int64(port)}},
			"speed": {Kind: &lgpb.MapValue_IntValue{IntValue: int64(baud)}},
		},
	}
	if protocol != "" {
		r.Params["protocol"] = &lgpb.MapValue{Kind: &lgpb.MapValue_StringValue{StringValue: protocol}}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resources[labgrid.ResourcePath(r.Path, r.Cls)] = r
	c.places[name] = &lgpb.Place{Name: name, Matches: []*lgpb.ResourceMatch{{Exporter: "*", Group: name, Cls: "*"}}}
	c.publishLocked(&lgpb.UpdateResponse{Kind: &lgpb.UpdateResponse_Resource{Resource: r}},
		&lgpb.UpdateResponse{Kind: &lgpb.UpdateResponse_Place{Place: c.places[name]}})
}

// Hold makes user ("host/user") the holder of place, as if they had
// acquired it.
func (c *Coordinator) Hold(place, user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acquireLocked(c.places[place], user)
}

// RequireProxy marks place's resources as reachable only through an SSH
// proxy to the exporter (extra.proxy_required, as labgrid's exporter sets
// with --isolated).
func (c *Coordinator) RequireProxy(place string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.resources {
		if r.GetPath().GetGroupName() == place {
			r.Extra = map[string]*lgpb.MapValue{"proxy_required": {Kind: &lgpb.MapValue_BoolValue{BoolValue: true}}}
			c.publishLocked(&lgpb.UpdateResponse{Kind: &lgpb.UpdateResponse_Resource{Resource: r}})
		}
	}
}

// Holder is who holds place ("" when it is free).
func (c *Coordinator) Holder(place string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.places[place].GetAcquired()
}

// Acquisitions counts the successful AcquirePlace calls for place.
func (c *Coordinator) Acquisitions(place string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.acquires[place]
}

// WaitHolder waits until place's holder is want ("": released) or ctx
// ends, and returns the holder then.
func (c *Coordinator) WaitHolder(ctx context.Context, place, want string) string {
	for {
		c.mu.Lock()
		h, ch := c.places[place].GetAcquired(), c.changed
		c.mu.Unlock()
		if h == want {
			return h
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return h
		}
	}
}

// publishLocked sends updates to every client stream (copies: the
// senders marshal them while the state changes).
func (c *Coordinator) publishLocked(us ...*lgpb.UpdateResponse) {
	m := &lgpb.ClientOutMessage{}
	for _, u := range us {
		m.Updates = append(m.Updates, proto.Clone(u).(*lgpb.UpdateResponse))
	}
	for _, s := range c.clients {
		select {
		case s.out <- m:
		default: // a client that does not read loses updates, as it would on overflow
		}
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Coordinator) acquireLocked(p *lgpb.Place, user string) {
	p.Acquired = proto.String(user)
	p.AcquiredResources = nil
	var us []*lgpb.UpdateResponse
	for key, r := range c.resources {
		if r.GetPath().GetGroupName() == p.GetName() {
			r.Acquired = p.GetName()
			p.AcquiredResources = append(p.AcquiredResources, key)
			us = append(us, &lgpb.UpdateResponse{Kind: &lgpb.UpdateResponse_Resource{Resource: r}})
		}
	}
	c.publishLocked(append(us, &lgpb.UpdateResponse{Kind: &lgpb.UpdateResponse_Place{Place: p}})...)
}

func peerOf(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok {
		return p.Addr.String()
	}
	return ""
}

// AcquirePlace acquires a place for the session of the calling connection.
func (c *Coordinator) AcquirePlace(ctx context.Context, req *lgpb.AcquirePlaceRequest) (*lgpb.AcquirePlaceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.clients[peerOf(ctx)]
	if !ok || s.name == "" {
		return nil, status.Errorf(codes.FailedPrecondition, "Peer %s does not have a valid session", peerOf(ctx))
	}
	p, ok := c.places[req.GetPlacename()]
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "Place %s does not exist", req.GetPlacename())
	}
	if p.GetAcquired() != "" {
		return nil, status.Errorf(codes.FailedPrecondition, "Place %s is already acquired", p.GetName())
	}
	c.acquireLocked(p, s.name)
	c.acquires[p.GetName()]++
	return &lgpb.AcquirePlaceResponse{}, nil
}

// ReleasePlace releases a place; with fromuser only if that user holds it.
func (c *Coordinator) ReleasePlace(ctx context.Context, req *lgpb.ReleasePlaceRequest) (*lgpb.ReleasePlaceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.places[req.GetPlacename()]
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "Place %s does not exist", req.GetPlacename())
	}
	if p.GetAcquired() == "" {
		if req.Fromuser != nil {
			return &lgpb.ReleasePlaceResponse{}, nil
		}
		return nil, status.Errorf(codes.FailedPrecondition, "Place %s is not acquired", p.GetName())
	}
	if req.Fromuser != nil && req.GetFromuser() != p.GetAcquired() {
		return &lgpb.ReleasePlaceResponse{}, nil
	}
	p.Acquired, p.AcquiredResources = nil, nil
	var us []*lgpb.UpdateResponse
	for _, r := range c.resources {
		if r.GetAcquired() == p.GetName() {
			r.Acquired = ""
			us = append(us, &lgpb.UpdateResponse{Kind: &lgpb.UpdateResponse_Resource{Resource: r}})
		}
	}
	c.publishLocked(append(us, &lgpb.UpdateResponse{Kind: &lgpb.UpdateResponse_Place{Place: p}})...)
	return &lgpb.ReleasePlaceResponse{}, nil
}

// GetPlaces lists the places.
func (c *Coordinator) GetPlaces(context.Context, *lgpb.GetPlacesRequest) (*lgpb.GetPlacesResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &lgpb.GetPlacesResponse{}
	for _, p := range c.places {
		out.Places = append(out.Places, proto.Clone(p).(*lgpb.Place))
	}
	return out, nil
}
