// HttpFrontEnd: an HTTP/1.1 server (Boost.Beast over Asio) that holds thousands of idle or slow
// connections without a thread each, and runs the requests' handlers on a bounded worker pool.
//
// Threads: Options::io_threads threads run every socket operation asynchronously (accepting,
// reading headers and bodies, writing answers); Options::workers threads run the handler, one
// request each. An idle keep-alive connection or a slow client costs a socket and a buffer,
// never a thread. A streamed answer (HttpResponse::stream) holds its worker until it ends.
//
// Deadlines (from the first byte a phase waits for to its last): a whole request header within
// header_timeout (on a new connection, counted from the accept), a whole body within
// body_timeout, the next request on a kept-alive connection within keep_alive_timeout, each
// answer (or streamed chunk) written within write_timeout. A connection past its deadline is
// closed without an answer.
//
// Limits, and what is answered past them (each answer's body comes from the ErrorHandler, with
// Connection: close; the connection is then closed gracefully: its end is shut down and what
// the client still sends is read and dropped, so the client reads the answer rather than a
// TCP reset):
//   - a header above max_header_bytes: 431; a request that is not HTTP/1.x: 400;
//   - a body above max_body_bytes (by Content-Length before it is read, or while a chunked
//     body is read): 413;
//   - a connection beyond max_connections open ones: 503 with Retry-After: 1 at once;
//   - a request when every worker is busy and max_queued_requests wait already: 503 with
//     Retry-After: 1;
//   - a handler that throws: 500.
// Expect: 100-continue is answered before the body is read. A HEAD request's answer is sent
// without its body (Content-Length still that of the body the handler set).
//
// Lifecycle: construct, Start (binds synchronously, then serves), Stop (or destroy). Stop closes
// the listening socket and every connection waiting for a request, lets the handlers that run
// or wait in the queue finish and their answers be written (streams must end by themselves:
// StreamWriter::Open turns false), then joins every thread.
// Thread-safety: Start and Stop from one owner thread; port() from any thread. The handlers
// run on several worker threads at once.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "api/rest/http_message.h"
#include "tessera/common/clock.h"

namespace tessera::api {

class HttpFrontEnd {
 public:
  struct Options {
    int io_threads = 2;              // >= 1
    int workers = 32;                // handler threads, >= 1
    int max_queued_requests = 256;   // requests waiting for a worker, >= 0
    int max_connections = 10'000;    // open connections at once, >= 1
    size_t max_header_bytes = 64 << 10;
    size_t max_body_bytes = size_t{1} << 20;
    Duration header_timeout = std::chrono::seconds(10);
    Duration body_timeout = std::chrono::seconds(30);
    Duration keep_alive_timeout = std::chrono::seconds(30);
    Duration write_timeout = std::chrono::seconds(30);
  };
  // Answers one request; runs on a worker thread.
  using Handler = std::function<void(HttpRequest&, HttpResponse&)>;
  // Fills in an answer the front end gives itself (see the limits above): `response.status` is
  // set; the handler sets the body. `request` has what was read of it (method and path once
  // the header was read; empty at the connection cap). Runs on an I/O thread (on a worker for
  // a 500): keep it short; it may run on several threads at once.
  using ErrorHandler = std::function<void(const HttpRequest& request, HttpResponse& response)>;

  HttpFrontEnd(Options options, Handler handler, ErrorHandler error_handler);
  ~HttpFrontEnd();
  HttpFrontEnd(const HttpFrontEnd&) = delete;
  HttpFrontEnd& operator=(const HttpFrontEnd&) = delete;

  // Binds host:port (port 0: an ephemeral port, see port()) and starts serving. Errors:
  // Unavailable when the address cannot be resolved or bound ("Address already in use"),
  // InvalidArgument for bad options or a port outside 0..65535, FailedPrecondition when
  // already started.
  absl::Status Start(const std::string& host, int port);

  // The bound port; 0 before Start.
  int port() const;

  // See Lifecycle above. Idempotent.
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::api
