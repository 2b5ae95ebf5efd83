#include "api/rest/http_front_end.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::api {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A blocking loopback client socket. Reads give up after 60 s so that a broken server fails
// the test instead of hanging it.
class Client {
 public:
  explicit Client(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval limit{.tv_sec = 60, .tv_usec = 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~Client() { close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads one answer: its header and a Content-Length body. "" when the connection ended first.
  std::string ReadAnswer() {
    size_t end = 0;
    while ((end = received_.find("\r\n\r\n")) == std::string::npos) {
      if (!Receive()) return "";
    }
    std::string header = received_.substr(0, end + 4);
    size_t length = 0;
    if (size_t at = header.find("Content-Length: "); at != std::string::npos) {
      length = std::stoul(header.substr(at + 16));
    }
    while (received_.size() < end + 4 + length) {
      if (!Receive()) return "";
    }
    std::string answer = received_.substr(0, end + 4 + length);
    received_.erase(0, answer.size());
    return answer;
  }

  // Reads until the server ends the connection. The outcome: "closed" (an orderly end, what
  // is left unread in `rest`), "reset", or "open" (still open after 60 s).
  std::string ReadToEnd(std::string* rest = nullptr) {
    while (Receive()) {
    }
    if (rest != nullptr) *rest = received_;
    if (reset_) return "reset";
    return timed_out_ ? "open" : "closed";
  }

 private:
  bool Receive() {
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == ECONNRESET) reset_ = true;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) timed_out_ = true;
    if (n <= 0) return false;
    received_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  bool connected_ = false;
  bool reset_ = false;
  bool timed_out_ = false;
  std::string received_;
};

constexpr char kHealth[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

class HttpFrontEndTest : public ::testing::Test {
 protected:
  void TearDown() override {
    release_.set_value();
    if (front_) front_->Stop();
  }

  void Start(HttpFrontEnd::Options options) {
    front_ = std::make_unique<HttpFrontEnd>(
        options, [this](HttpRequest& req, HttpResponse& res) { Handle(req, res); },
        [](const HttpRequest&, HttpResponse& res) { res.SetContent("refused\n", "text/plain"); });
    ASSERT_TRUE(front_->Start("127.0.0.1", 0).ok());
    ASSERT_GT(front_->port(), 0);
  }

  // GET /healthz: "ok"; GET /block: waits until the test ends; POST /echo: the body.
  void Handle(HttpRequest& req, HttpResponse& res) {
    if (req.path == "/block") {
      if (blocked_++ == 0) started_.set_value();
      released_.wait();
    }
    res.SetContent(req.path == "/echo" ? req.body : "ok\n", "text/plain");
  }

  // One request on a connection of its own; its answer.
  std::string Ask(std::string_view request) {
    Client client(front_->port());
    if (!client.Send(request)) return "";
    return client.ReadAnswer();
  }

  std::unique_ptr<HttpFrontEnd> front_;
  std::atomic<int> blocked_{0};
  std::promise<void> started_;
  std::promise<void> release_;
  std::shared_future<void> released_ = release_.get_future().share();
};

TEST_F(HttpFrontEndTest, AnswersAndKeepsTheConnectionAlive) {
  Start({});
  Client client(front_->port());
  ASSERT_TRUE(client.Send(kHealth));
  EXPECT_THAT(client.ReadAnswer(), StartsWith("HTTP/1.1 200 OK\r\n"));
  ASSERT_TRUE(client.Send("POST /echo?a=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"));
  const std::string answer = client.ReadAnswer();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(answer, HasSubstr("\r\n\r\nhello"));
}

TEST_F(HttpFrontEndTest, HeadIsAnsweredWithoutABody) {
  Start({});
  Client client(front_->port());
  ASSERT_TRUE(client.Send("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  char buffer[256];
  std::string header;
  while (header.find("\r\n\r\n") == std::string::npos) {
    const ssize_t n = recv(client.fd(), buffer, sizeof(buffer), 0);
    ASSERT_GT(n, 0);
    header.append(buffer, static_cast<size_t>(n));
  }
  EXPECT_THAT(header, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(header, HasSubstr("Content-Length: 3\r\n"));
  EXPECT_THAT(header, ::testing::EndsWith("\r\n\r\n"));  // no body followed
  ASSERT_TRUE(client.Send(kHealth));
  const std::string next = client.ReadAnswer();  // would start with a body sent after the HEAD's
  EXPECT_THAT(next, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(next, HasSubstr("\r\n\r\nok\n"));
}

TEST_F(HttpFrontEndTest, ExpectContinueIsAnsweredBeforeTheBody) {
  Start({});
  Client client(front_->port());
  ASSERT_TRUE(client.Send(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_THAT(client.ReadAnswer(), StartsWith("HTTP/1.1 100 Continue\r\n"));
  ASSERT_TRUE(client.Send("hi"));
  EXPECT_THAT(client.ReadAnswer(), HasSubstr("\r\n\r\nhi"));
}

TEST_F(HttpFrontEndTest, SlowHeaderIsClosedAfterTheDeadlineWhileOthersAreAnswered) {
  Start({.io_threads = 1, .workers = 1, .header_timeout = std::chrono::milliseconds(300)});
  Client slow(front_->port());
  ASSERT_TRUE(slow.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n"));  // never ends its header
  EXPECT_THAT(Ask(kHealth), StartsWith("HTTP/1.1 200 OK\r\n"));
  std::string rest;
  EXPECT_EQ(slow.ReadToEnd(&rest), "closed");
  EXPECT_EQ(rest, "");  // closed without an answer
}

TEST_F(HttpFrontEndTest, ManyIdleConnectionsCostNoThread) {
  // 500 client and 500 server sockets in this process.
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = std::max<rlim_t>(files.rlim_cur, std::min<rlim_t>(files.rlim_max, 4096));
  setrlimit(RLIMIT_NOFILE, &files);
  ASSERT_GE(files.rlim_cur, 1100u) << "the open-file limit is too low for this test";

  Start({.io_threads = 1, .workers = 2});
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 500; ++i) {
    idle.push_back(std::make_unique<Client>(front_->port()));
    ASSERT_TRUE(idle.back()->connected()) << i;
    if (i % 2 == 0) {
      ASSERT_TRUE(idle.back()->Send("GET /healthz HTTP/1.1\r\n"));  // half a header
    }
  }
  EXPECT_THAT(Ask(kHealth), StartsWith("HTTP/1.1 200 OK\r\n"));
  // The idle ones are still served once they finish.
  ASSERT_TRUE(idle[0]->Send("Host: x\r\n\r\n"));
  EXPECT_THAT(idle[0]->ReadAnswer(), StartsWith("HTTP/1.1 200 OK\r\n"));
}

TEST_F(HttpFrontEndTest, PastTheConnectionCapTheAnswerIs503WithRetryAfterNotAReset) {
  Start({.max_connections = 2});
  auto first = std::make_unique<Client>(front_->port());
  Client second(front_->port());
  Client third(front_->port());
  ASSERT_TRUE(third.Send(kHealth));
  const std::string answer = third.ReadAnswer();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 503 Service Unavailable\r\n"));
  EXPECT_THAT(answer, HasSubstr("Retry-After: 1\r\n"));
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(answer, HasSubstr("\r\n\r\nrefused\n"));
  EXPECT_EQ(third.ReadToEnd(), "closed");

  // Once a connection closes, a new one is served again.
  first.reset();
  std::string later;
  for (int attempt = 0; attempt < 500 && !later.starts_with("HTTP/1.1 200"); ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    later = Ask(kHealth);
  }
  EXPECT_THAT(later, StartsWith("HTTP/1.1 200 OK\r\n"));
}

TEST_F(HttpFrontEndTest, BodyOverTheLimitIs413) {
  Start({.max_body_bytes = 1000});
  {
    Client client(front_->port());
    ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n"));
    client.Send(std::string(5000, 'x'));
    EXPECT_THAT(client.ReadAnswer(), StartsWith("HTTP/1.1 413 Payload Too Large\r\n"));
    EXPECT_EQ(client.ReadToEnd(), "closed");
  }
  {
    Client client(front_->port());
    const std::string chunk = "320\r\n" + std::string(800, 'x') + "\r\n";  // 800 bytes
    ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                            chunk + chunk + "0\r\n\r\n"));
    EXPECT_THAT(client.ReadAnswer(), StartsWith("HTTP/1.1 413 Payload Too Large\r\n"));
    EXPECT_EQ(client.ReadToEnd(), "closed");
  }
  EXPECT_THAT(Ask("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" +
                  std::string(1000, 'y')),
              StartsWith("HTTP/1.1 200 OK\r\n"));
}

TEST_F(HttpFrontEndTest, MalformedRequestIs400AndAnOversizedHeader431) {
  Start({.max_header_bytes = 1024});
  EXPECT_THAT(Ask("NOT HTTP\r\n\r\n"), StartsWith("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_THAT(Ask("GET / HTTP/1.1\r\nX-Big: " + std::string(2000, 'x') + "\r\n\r\n"),
              StartsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
}

TEST_F(HttpFrontEndTest, AFullWorkerQueueAnswers503WithRetryAfter) {
  Start({.workers = 1, .max_queued_requests = 1});
  Client busy(front_->port());
  ASSERT_TRUE(busy.Send("GET /block HTTP/1.1\r\nHost: x\r\n\r\n"));
  started_.get_future().wait();  // the one worker is taken
  Client a(front_->port());
  Client b(front_->port());
  ASSERT_TRUE(a.Send(kHealth));
  ASSERT_TRUE(b.Send(kHealth));
  // One of the two waits in the queue; the other finds it full and is answered at once.
  pollfd fds[2] = {{.fd = a.fd(), .events = POLLIN}, {.fd = b.fd(), .events = POLLIN}};
  ASSERT_EQ(poll(fds, 2, 60'000), 1);
  Client& refused = (fds[0].revents & POLLIN) != 0 ? a : b;
  Client& queued = &refused == &a ? b : a;
  const std::string answer = refused.ReadAnswer();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 503 Service Unavailable\r\n"));
  EXPECT_THAT(answer, HasSubstr("Retry-After: 1\r\n"));
  EXPECT_EQ(refused.ReadToEnd(), "closed");

  release_.set_value();
  release_ = std::promise<void>();  // TearDown's
  EXPECT_THAT(busy.ReadAnswer(), StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(queued.ReadAnswer(), StartsWith("HTTP/1.1 200 OK\r\n"));
}

TEST_F(HttpFrontEndTest, StreamedAnswerIsChunkedAndEndsWhenTheServerStops) {
  std::promise<void> streaming;
  front_ = std::make_unique<HttpFrontEnd>(
      HttpFrontEnd::Options{},
      [&](HttpRequest&, HttpResponse& res) {
        res.content_type = "application/x-ndjson";
        res.stream = [&, sent = false](StreamWriter& writer) mutable {
          if (!sent) {
            sent = true;
            const bool ok = writer.Write("{}\n");
            streaming.set_value();
            return ok;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          return writer.Open();
        };
      },
      [](const HttpRequest&, HttpResponse&) {});
  ASSERT_TRUE(front_->Start("127.0.0.1", 0).ok());
  auto client = std::make_unique<Client>(front_->port());
  ASSERT_TRUE(client->Send("GET /watch HTTP/1.1\r\nHost: x\r\n\r\n"));
  streaming.get_future().wait();
  std::string outcome;
  std::string received;
  std::thread reader([&] {
    outcome = client->ReadToEnd(&received);
    client.reset();  // the client leaves once the answer ended
  });
  front_->Stop();
  reader.join();
  EXPECT_EQ(outcome, "closed");
  EXPECT_THAT(received, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(received, HasSubstr("Transfer-Encoding: chunked\r\n"));
  EXPECT_THAT(received, HasSubstr("\r\n\r\n3\r\n{}\n\r\n0\r\n\r\n"));  // the event, the end
}

}  // namespace
}  // namespace tessera::api
