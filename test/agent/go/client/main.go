// Command client calls attestation.v1.AttestationService over a unix socket with grpc-go, the
// way cocos' Go client does (grpc.Dial("unix://"+path), insecure). It needs no generated code:
// requests and responses are encoded by hand with a byte codec, which keeps the build offline
// against Debian's golang-google-grpc-dev alone. Prints one JSON line per call.
//
// With -bench it stays up on one connection and answers commands on stdin, for bench/agent.ts:
// "seq N" makes N sequential FetchAttestation(VTPM) calls, "conc C N" runs C callers of N calls
// each; every call has a fresh random nonce and prints {"ms", "code", "nonce", "hex"} (its own
// duration around the RPC alone), then {"done": true, "wallMs"} ends the command.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// rawCodec passes pre-encoded protobuf bytes through.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) {
	b, ok := v.(*[]byte)
	if !ok {
		return nil, errors.New("rawCodec: want *[]byte")
	}
	return *b, nil
}

func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	b, ok := v.(*[]byte)
	if !ok {
		return errors.New("rawCodec: want *[]byte")
	}
	*b = append((*b)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = appendVarint(b, uint64(field<<3|2))
	b = appendVarint(b, uint64(len(v)))
	return append(b, v...)
}

// firstBytesField returns field 1 (bytes) of a message: AttestationResponse.quote or CloudTokenResponse.token.
func firstBytesField(m []byte) ([]byte, error) {
	for i := 0; i < len(m); {
		key, n := readVarint(m[i:])
		if n == 0 {
			return nil, errors.New("bad varint")
		}
		i += n
		switch key & 7 {
		case 0:
			_, n = readVarint(m[i:])
			i += n
		case 2:
			l, n := readVarint(m[i:])
			i += n
			if i+int(l) > len(m) {
				return nil, errors.New("truncated field")
			}
			if key>>3 == 1 {
				return m[i : i+int(l)], nil
			}
			i += int(l)
		default:
			return nil, fmt.Errorf("unexpected wire type %d", key&7)
		}
	}
	return nil, nil
}

func readVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * uint(i))
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

type result struct {
	Code    uint32  `json:"code"`
	Message string  `json:"message,omitempty"`
	Hex     string  `json:"hex,omitempty"`
	Nonce   string  `json:"nonce,omitempty"`
	Ms      float64 `json:"ms,omitempty"`
}

// call makes one unary call and decodes its answer (field 1 of the response, or the status).
func call(conn *grpc.ClientConn, method string, req []byte, timeout time.Duration) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var resp []byte
	start := time.Now()
	err := conn.Invoke(ctx, "/attestation.v1.AttestationService/"+method, &req, &resp)
	out := result{Ms: float64(time.Since(start).Nanoseconds()) / 1e6}
	if err != nil {
		s := status.Convert(err)
		out.Code = uint32(s.Code())
		out.Message = s.Message()
		return out
	}
	v, perr := firstBytesField(resp)
	if perr != nil {
		out.Code = 13
		out.Message = perr.Error()
		return out
	}
	out.Hex = hex.EncodeToString(v)
	return out
}

// attestationRequest is a FetchAttestationRequest with a fresh random nonce for platform_type 3 (VTPM).
func attestationRequest() ([]byte, []byte) {
	nonce := make([]byte, 32)
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	req := appendBytesField(nil, 2, nonce)
	req = appendVarint(req, 3<<3|0)
	return appendVarint(req, 3), nonce
}

// bench answers "seq N" and "conc C N" commands on stdin over one connection (see the top).
func bench(conn *grpc.ClientConn, timeout time.Duration) {
	enc := json.NewEncoder(os.Stdout)
	var mu sync.Mutex
	emit := func(v interface{}) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(v)
	}
	one := func() {
		req, nonce := attestationRequest()
		r := call(conn, "FetchAttestation", req, timeout)
		r.Nonce = hex.EncodeToString(nonce)
		emit(r)
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var c, n int
		start := time.Now()
		if k, _ := fmt.Sscanf(in.Text(), "seq %d", &n); k == 1 {
			for i := 0; i < n; i++ {
				one()
			}
		} else if k, _ := fmt.Sscanf(in.Text(), "conc %d %d", &c, &n); k == 2 {
			var wg sync.WaitGroup
			for w := 0; w < c; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < n; i++ {
						one()
					}
				}()
			}
			wg.Wait()
		} else {
			fmt.Fprintln(os.Stderr, "unknown command:", in.Text())
			os.Exit(2)
		}
		emit(map[string]interface{}{"done": true, "wallMs": float64(time.Since(start).Nanoseconds()) / 1e6})
	}
}

func main() {
	socket := flag.String("socket", "", "agent unix socket")
	method := flag.String("method", "FetchAttestation", "FetchAttestation, FetchCloudToken, or any name (for UNIMPLEMENTED)")
	platform := flag.Int("platform", 3, "platform_type enum value")
	nonce := flag.String("nonce", "", "nonce, hex")
	reportData := flag.String("report-data", "", "report_data, hex")
	timeout := flag.Duration("timeout", 10*time.Second, "per-call deadline (cocos uses 10s)")
	benchMode := flag.Bool("bench", false, "answer seq/conc commands on stdin (bench/agent.ts)")
	flag.Parse()

	n, err := hex.DecodeString(*nonce)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	rd, err := hex.DecodeString(*reportData)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var req []byte
	if *method == "FetchCloudToken" {
		req = appendBytesField(req, 1, n)
	} else {
		req = appendBytesField(req, 1, rd)
		req = appendBytesField(req, 2, n)
		if *platform != 0 {
			req = appendVarint(req, 3<<3|0)
			req = appendVarint(req, uint64(*platform))
		}
	}

	conn, err := grpc.Dial("unix://"+*socket, grpc.WithInsecure(), grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer conn.Close()
	if *benchMode {
		bench(conn, *timeout)
		return
	}
	_ = json.NewEncoder(os.Stdout).Encode(call(conn, *method, req, *timeout))
}
