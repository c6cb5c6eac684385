package lgfake

import (
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/internal/labgrid/lgpb"
)

// ClientStream is a client's session: startup names it, subscribe sends
// the places or resources there are (and every later change), sync is
// answered in order with everything before it.
func (c *Coordinator) ClientStream(st grpc.BidiStreamingServer[lgpb.ClientInMessage, lgpb.ClientOutMessage]) error {
	key := peerOf(st.Context())
	s := &session{out: make(chan *lgpb.ClientOutMessage, 1024)}
	c.mu.Lock()
	c.clients[key] = s
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.clients[key] == s {
			delete(c.clients, key)
		}
		c.mu.Unlock()
	}()
	errc := make(chan error, 1)
	go func() { errc <- c.receive(st, s) }()
	for {
		select {
		case m := <-s.out:
			if err := st.Send(m); err != nil {
				return err
			}
		case err := <-errc:
			return err
		case <-st.Context().Done():
			return st.Context().Err()
		}
	}
}

// receive handles the client's messages until its side ends.
func (c *Coordinator) receive(st grpc.BidiStreamingServer[lgpb.ClientInMessage, lgpb.ClientOutMessage], s *session) error {
	for {
		m, err := st.Recv()
		if err != nil {
			return nil // the client closed or went away
		}
		c.mu.Lock()
		switch k := m.Kind.(type) {
		case *lgpb.ClientInMessage_Startup:
			s.name = k.Startup.GetName()
		case *lgpb.ClientInMessage_Subscribe:
			out := &lgpb.ClientOutMessage{}
			if k.Subscribe.GetAllPlaces() {
				for _, p := range c.places {
					out.Updates = append(out.Updates, &lgpb.UpdateResponse{Kind: &lgpb.UpdateResponse_Place{Place: proto.Clone(p).(*lgpb.Place)}})
				}
			}
			if k.Subscribe.GetAllResources() {
				for _, r := range c.resources {
					out.Updates = append(out.Updates, &lgpb.UpdateResponse{Kind: &lgpb.UpdateResponse_Resource{Resource: proto.Clone(r).(*lgpb.Resource)}})
				}
			}
			s.out <- out
		case *lgpb.ClientInMessage_Sync:
			s.out <- &lgpb.ClientOutMessage{Sync: &lgpb.Sync{Id: k.Sync.GetId()}}
		}
		c.mu.Unlock()
	}
}
