#include "api/rest/http_front_end.h"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fmt/format.h"

namespace tessera::api {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// How long a closing connection reads (and drops) what its client still sends, so that the
// client reads the answer before it sees the connection end.
constexpr std::chrono::seconds kLingerTimeout{2};
// How long the acceptor waits before it tries again after a failed accept (out of descriptors).
constexpr std::chrono::milliseconds kAcceptRetry{50};
constexpr size_t kReadChunk = 4096;

// A fixed number of threads and a bounded queue of tasks. Thread-safe.
class WorkerPool {
 public:
  WorkerPool(int workers, int max_queued)
      : workers_(static_cast<size_t>(workers)), max_queued_(static_cast<size_t>(max_queued)) {}
  ~WorkerPool() { Stop(); }

  void Start() {
    for (size_t i = 0; i < workers_; ++i) threads_.emplace_back([this] { Run(); });
  }

  // Queues `task`, unless every worker is busy and max_queued tasks wait already, or the pool
  // stops; then returns false.
  bool TrySubmit(std::function<void()>& task) {
    {
      std::lock_guard lock(mu_);
      if (stopping_ || busy_ + queue_.size() >= workers_ + max_queued_) return false;
      queue_.push_back(std::move(task));
    }
    cv_.notify_one();
    return true;
  }

  // Runs what is queued, then joins the threads. Idempotent.
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

 private:
  void Run() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      std::function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
      lock.unlock();
      task();
      task = nullptr;  // what it holds goes now, not under the lock
      lock.lock();
      --busy_;
    }
  }

  const size_t workers_;
  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  size_t busy_ = 0;                          // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;
};

class Connection;

// What the connections share with the front end.
struct FrontEndState {
  FrontEndState(HttpFrontEnd::Options o, HttpFrontEnd::Handler h, HttpFrontEnd::ErrorHandler e)
      : options(o),
        handler(std::move(h)),
        error_handler(std::move(e)),
        pool(o.workers, o.max_queued_requests) {}

  const HttpFrontEnd::Options options;
  const HttpFrontEnd::Handler handler;
  const HttpFrontEnd::ErrorHandler error_handler;
  WorkerPool pool;
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections;  // guarded by mu
  int served = 0;  // guarded by mu: the connections counted against max_connections
};

// Read errors after which the connection simply ends: the client left, a deadline passed (the
// stream has closed the socket), or the server stops.
bool ClientGoneOrTimedOut(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message ||
         ec.category() != http::make_error_code(http::error::bad_target).category();
}

std::string_view View(beast::string_view text) { return {text.data(), text.size()}; }

HttpRequest BriefOf(const http::request_parser<http::string_body>& parser) {
  const http::request<http::string_body>& header = parser.get();
  const std::string_view target = View(header.target());
  const size_t query = target.find('?');
  HttpRequest request{.method = std::string(View(header.method_string())),
                      .path = PercentDecode(target.substr(0, query), false),
                      .target = std::string(target)};
  if (query != std::string_view::npos) request.params = ParseQuery(target.substr(query + 1));
  for (const auto& field : header) {
    request.headers.push_back(
        {std::string(View(field.name_string())), std::string(View(field.value()))});
  }
  return request;
}

// One accepted connection. Its socket operations run on its strand; the handler of its request
// and a streamed answer run on a worker thread.
class Connection : public std::enable_shared_from_this<Connection>, private StreamWriter {
 public:
  Connection(tcp::socket socket, FrontEndState* front, bool counted)
      : stream_(std::move(socket)), front_(front), counted_(counted) {}

  ~Connection() override {
    std::lock_guard lock(front_->mu);
    front_->connections.erase(this);
    if (counted_) --front_->served;
  }

  // Serves requests until the client leaves, a deadline passes or the server stops.
  void Serve() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      self->ReadHeader(self->front_->options.header_timeout);
    });
  }

  // Answers 503 (too many connections) and closes.
  void Refuse() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      self->Answer(HttpRequest{}, 503);
    });
  }

  // Closes the connection if it waits for (or reads) a request: the server stops.
  void CloseIfWaiting() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      if (self->reading_) self->stream_.close();
    });
  }

 private:
  // Waits up to keep_alive_timeout for the next request on a kept-alive connection.
  void WaitForRequest() {
    if (buffer_.size() > 0) return ReadHeader(front_->options.header_timeout);
    reading_ = true;
    if (front_->stopping) return Linger();
    stream_.expires_after(front_->options.keep_alive_timeout);
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return;  // the client left or idled too long
                              self->buffer_.commit(n);
                              self->ReadHeader(self->front_->options.header_timeout);
                            });
  }

  void ReadHeader(Duration timeout) {
    reading_ = true;
    if (front_->stopping) return Linger();
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(front_->options.max_header_bytes));
    parser_->body_limit(front_->options.max_body_bytes);
    stream_.expires_after(timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              self->OnHeader(ec);
                            });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      auto answer = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
      stream_.expires_after(front_->options.write_timeout);
      http::async_write(stream_, *answer,
                        [self = shared_from_this(), answer](beast::error_code ec, size_t) {
                          if (!ec) self->ReadBody();
                        });
      return;
    }
    if (parser_->is_done()) return Dispatch();
    ReadBody();
  }

  void ReadBody() {
    stream_.expires_after(front_->options.body_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->OnReadError(ec);
                       self->Dispatch();
                     });
  }

  void OnReadError(beast::error_code ec) {
    if (ec == http::error::header_limit) return Answer(BriefOf(*parser_), 431);
    if (ec == http::error::body_limit) return Answer(BriefOf(*parser_), 413);
    if (ClientGoneOrTimedOut(ec)) return;  // the stream is closed as the connection goes
    Answer(BriefOf(*parser_), 400);
  }

  // Hands the request to a worker; 503 when the pool is full.
  void Dispatch() {
    reading_ = false;
    stream_.expires_never();
    keep_alive_ = parser_->get().keep_alive();
    head_ = parser_->get().method() == http::verb::head;
    HttpRequest request = BriefOf(*parser_);
    request.body = std::move(parser_->get().body());
    HttpRequest brief{.method = request.method, .path = request.path};
    parser_.reset();
    std::function<void()> task = [self = shared_from_this(),
                                  request = std::move(request)]() mutable {
      self->Run(request);
    };
    if (!front_->pool.TrySubmit(task)) Answer(brief, 503);
  }

  // On a worker thread.
  void Run(HttpRequest& request) {
    HttpResponse response;
    try {
      front_->handler(request, response);
    } catch (const std::exception&) {
      response = HttpResponse{.status = 500};
      front_->error_handler(request, response);
    }
    if (response.stream) return RunStream(response);
    net::post(stream_.get_executor(),
              [self = shared_from_this(), response = std::move(response)]() mutable {
                self->WriteAnswer(std::move(response));
              });
  }

  // An answer of the front end itself: its body from the ErrorHandler, then close.
  void Answer(const HttpRequest& request, int status) {
    reading_ = false;
    head_ = false;
    HttpResponse response{.status = status};
    if (status == 503) response.SetHeader("Retry-After", "1");
    front_->error_handler(request, response);
    keep_alive_ = false;
    WriteAnswer(std::move(response));
  }

  template <class Body>
  void FillHeader(http::response<Body>& message, const HttpResponse& response) const {
    message.version(11);
    message.result(static_cast<unsigned>(response.status));
    for (const HttpHeader& header : response.headers) message.insert(header.name, header.value);
    if (!response.content_type.empty()) {
      message.set(http::field::content_type, response.content_type);
    }
  }

  void WriteAnswer(HttpResponse response) {
    const bool keep_alive = keep_alive_ && !front_->stopping;
    auto message = std::make_shared<http::response<http::string_body>>();
    FillHeader(*message, response);
    message->body() = std::move(response.body);
    message->keep_alive(keep_alive);
    message->prepare_payload();
    if (head_) {  // the header of the answer a GET would get, without its body
      const size_t length = message->body().size();
      message->body().clear();
      message->content_length(length);
    }
    stream_.expires_after(front_->options.write_timeout);
    http::async_write(stream_, *message,
                      [self = shared_from_this(), message, keep_alive](beast::error_code ec,
                                                                       size_t) {
                        if (ec) return;
                        if (keep_alive) return self->WaitForRequest();
                        self->Linger();
                      });
  }

  // Shuts down the sending side and reads what the client still sends until it closes (or
  // kLingerTimeout passes): closing a socket with unread data would reset the connection.
  void Linger() {
    reading_ = false;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTimeout);
    Drain();
  }

  void Drain() {
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (ec) return self->stream_.close();
                              self->Drain();
                            });
  }

  // Runs `op(done)` on the strand and waits until it calls done(ok). On a worker thread.
  bool OnStrand(const std::function<void(std::function<void(bool)>)>& op) {
    std::promise<bool> result;
    std::future<bool> done = result.get_future();
    net::post(stream_.get_executor(), [&] { op([&result](bool ok) { result.set_value(ok); }); });
    return done.get();
  }

  // A streamed answer: the header, then a chunk a round of response.stream, then the last chunk
  // and the close. On a worker thread, which it holds until the stream ends.
  void RunStream(HttpResponse& response) {
    bool ok = OnStrand([&](std::function<void(bool)> done) {
      stream_header_.emplace();
      FillHeader(*stream_header_, response);
      stream_header_->chunked(true);
      stream_header_->keep_alive(false);
      serializer_.emplace(*stream_header_);
      stream_.expires_after(front_->options.write_timeout);
      http::async_write_header(stream_, *serializer_,
                               [self = shared_from_this(), done](beast::error_code ec, size_t) {
                                 if (!ec) self->WatchForClose();
                                 done(!ec);
                               });
    });
    while (ok && response.stream(*this)) {
    }
    OnStrand([&](std::function<void(bool)> done) {
      if (!ok || client_gone_) {
        stream_.close();
        return done(false);
      }
      stream_.expires_after(front_->options.write_timeout);
      net::async_write(stream_, http::make_chunk_last(),
                       [self = shared_from_this(), done](beast::error_code ec, size_t) {
                         if (ec) {
                           self->stream_.close();
                         } else {
                           // The watch read ends (cancelled), then the connection lingers.
                           self->linger_after_stream_ = true;
                           beast::error_code ignored;
                           self->stream_.socket().cancel(ignored);
                         }
                         done(!ec);
                       });
    });
  }

  // While a stream is written, reads what the client sends, to see when it goes away.
  void WatchForClose() {
    stream_.expires_never();
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (!ec) return self->WatchForClose();
                              self->client_gone_ = true;
                              if (self->linger_after_stream_) self->Linger();
                            });
  }

  // StreamWriter, on the worker thread.
  bool Write(std::string_view data) override {
    return OnStrand([&](std::function<void(bool)> done) {
      if (client_gone_) return done(false);
      stream_.expires_after(front_->options.write_timeout);  // the write's: a read is pending
      net::async_write(stream_, http::make_chunk(net::buffer(data.data(), data.size())),
                       [self = shared_from_this(), done](beast::error_code ec, size_t) {
                         done(!ec);
                       });
    });
  }
  bool Open() const override { return !client_gone_ && !front_->stopping; }

  beast::tcp_stream stream_;
  FrontEndState* const front_;
  const bool counted_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool reading_ = false;     // waits for or reads a request
  bool keep_alive_ = false;  // the request being served asked to keep the connection
  bool head_ = false;        // the request being served is a HEAD
  std::optional<http::response<http::empty_body>> stream_header_;
  std::optional<http::response_serializer<http::empty_body>> serializer_;
  std::atomic<bool> client_gone_{false};
  bool linger_after_stream_ = false;
};

}  // namespace

class HttpFrontEnd::Impl {
 public:
  Impl(Options options, Handler handler, ErrorHandler error_handler)
      : state_(options, std::move(handler), std::move(error_handler)),
        ioc_(options.io_threads > 0 ? options.io_threads : 1),
        acceptor_(net::make_strand(ioc_)),
        accept_retry_(acceptor_.get_executor()) {}
  ~Impl() { Stop(); }

  absl::Status Start(const std::string& host, int port);
  int port() const { return port_.load(); }
  void Stop();

 private:
  absl::Status CheckOptions() const;
  void Accept();
  void OnAccept(beast::error_code ec, tcp::socket socket);

  FrontEndState state_;
  net::io_context ioc_;
  tcp::acceptor acceptor_;
  net::steady_timer accept_retry_;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::vector<std::thread> io_threads_;
  std::atomic<int> port_{0};
  bool started_ = false;
};

absl::Status HttpFrontEnd::Impl::CheckOptions() const {
  const Options& o = state_.options;
  if (o.io_threads < 1 || o.workers < 1 || o.max_queued_requests < 0 || o.max_connections < 1) {
    return absl::InvalidArgumentError(
        "io_threads, workers and max_connections must be >= 1, max_queued_requests >= 0");
  }
  if (o.max_header_bytes == 0 || o.max_header_bytes > UINT32_MAX) {
    return absl::InvalidArgumentError("max_header_bytes must be in 1..4294967295");
  }
  if (o.header_timeout <= Duration{0} || o.body_timeout <= Duration{0} ||
      o.keep_alive_timeout <= Duration{0} || o.write_timeout <= Duration{0}) {
    return absl::InvalidArgumentError("every timeout must be positive");
  }
  return absl::OkStatus();
}

absl::Status HttpFrontEnd::Impl::Start(const std::string& host, int port) {
  if (started_) return absl::FailedPreconditionError("already started");
  started_ = true;
  if (absl::Status s = CheckOptions(); !s.ok()) return s;
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(fmt::format("port {}: must be in 0..65535", port));
  }
  beast::error_code ec;
  tcp::resolver resolver(ioc_);
  const tcp::resolver::results_type endpoints =
      resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || endpoints.empty()) {
    return absl::UnavailableError(fmt::format("cannot resolve {}: {}", host, ec.message()));
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  // SO_REUSEADDR only (no SO_REUSEPORT): a second server must not share a port in use.
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        fmt::format("cannot listen on {}:{}: {}", host, port, ec.message()));
  }
  port_ = acceptor_.local_endpoint().port();
  work_.emplace(ioc_.get_executor());
  state_.pool.Start();
  Accept();
  for (int i = 0; i < state_.options.io_threads; ++i) {
    io_threads_.emplace_back([this] { ioc_.run(); });
  }
  return absl::OkStatus();
}

void HttpFrontEnd::Impl::Accept() {
  acceptor_.async_accept(net::make_strand(ioc_), [this](beast::error_code ec, tcp::socket socket) {
    OnAccept(ec, std::move(socket));
  });
}

void HttpFrontEnd::Impl::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (state_.stopping || ec == net::error::operation_aborted) return;
  if (ec) {  // out of descriptors, most likely: the client waits in the backlog meanwhile
    accept_retry_.expires_after(kAcceptRetry);
    accept_retry_.async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec && !state_.stopping) Accept();
    });
    return;
  }
  beast::error_code ignored;
  // Without TCP_NODELAY, Nagle's algorithm and the client's delayed ACK would hold back the
  // body of an answer written after its header.
  socket.set_option(tcp::no_delay(true), ignored);
  bool counted = false;
  std::shared_ptr<Connection> connection;
  {
    std::lock_guard lock(state_.mu);
    counted = state_.served < state_.options.max_connections;
    if (counted) ++state_.served;
    connection = std::make_shared<Connection>(std::move(socket), &state_, counted);
    state_.connections.emplace(connection.get(), connection);
  }
  if (counted) {
    connection->Serve();
  } else {
    connection->Refuse();
  }
  Accept();
}

void HttpFrontEnd::Impl::Stop() {
  if (io_threads_.empty()) return;
  state_.stopping = true;
  net::post(acceptor_.get_executor(), [this] {
    beast::error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
  });
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard lock(state_.mu);
    for (const auto& [raw, weak] : state_.connections) {
      if (std::shared_ptr<Connection> connection = weak.lock()) open.push_back(connection);
    }
  }
  for (const std::shared_ptr<Connection>& connection : open) connection->CloseIfWaiting();
  open.clear();
  state_.pool.Stop();
  work_.reset();  // the I/O threads return once the last answer is written
  for (std::thread& thread : io_threads_) thread.join();
  io_threads_.clear();
}

HttpFrontEnd::HttpFrontEnd(Options options, Handler handler, ErrorHandler error_handler)
    : impl_(std::make_unique<Impl>(options, std::move(handler), std::move(error_handler))) {}

HttpFrontEnd::~HttpFrontEnd() = default;

absl::Status HttpFrontEnd::Start(const std::string& host, int port) {
  return impl_->Start(host, port);
}

int HttpFrontEnd::port() const { return impl_->port(); }

void HttpFrontEnd::Stop() { impl_->Stop(); }

}  // namespace tessera::api
