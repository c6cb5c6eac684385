// Package lgpb is the Go client and server code generated from
// coordinator.proto: the part of labgrid's coordinator gRPC interface
// wirebench uses.
//
// The generated files are committed, so building needs no protoc. To
// regenerate after changing coordinator.proto (needs protoc, e.g. Debian's
// protobuf-compiler, and the two plugins on PATH):
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
//	go generate ./internal/labgrid/lgpb
package lgpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative coordinator.proto
