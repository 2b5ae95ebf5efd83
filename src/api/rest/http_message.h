// HttpRequest and HttpResponse: one HTTP/1.1 exchange as a handler of the HTTP front end
// (http_front_end.h) sees it, with the query string and path already percent-decoded.
//
// Header names compare case-insensitively. A response either carries its whole body (`body`,
// sent with Content-Length) or streams it (`stream`, sent chunked). Neither type is
// thread-safe; each belongs to the one worker thread that serves its request.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::api {

struct HttpHeader {
  std::string name;
  std::string value;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ... as sent
  std::string path;    // percent-decoded, without the query string
  std::string target;  // as sent: the path and the query string, not decoded
  // Query parameters, percent-decoded ('+' is a space), in the order sent.
  std::multimap<std::string, std::string> params;
  std::vector<HttpHeader> headers;
  std::string body;
  // Set by the router: the captures of the route's pattern ("/api/v1/jobs/([^/]+)" → the id).
  std::vector<std::string> path_params;

  bool HasHeader(std::string_view name) const;
  // The first value of header `name`; "" when absent.
  std::string Header(std::string_view name) const;
  // The first value of query parameter `name`; "" when absent.
  std::string Param(const std::string& name) const;
};

// Writes a streamed body, one chunk a call; used on the worker thread that runs the stream.
class StreamWriter {
 public:
  virtual ~StreamWriter() = default;
  // Sends `data` as one chunk and waits until it is written. False when the client went away
  // or the write failed or timed out: the stream should end.
  virtual bool Write(std::string_view data) = 0;
  // False once the client has closed its end of the connection or the server stops.
  virtual bool Open() const = 0;
};

struct HttpResponse {
  int status = 200;
  std::vector<HttpHeader> headers;  // besides Content-Type, Content-Length and Connection
  std::string content_type;
  std::string body;
  // When set, `body` is ignored and the answer is streamed (Transfer-Encoding: chunked): the
  // front end calls `stream` again and again on the worker thread until it returns false,
  // then ends the body and closes the connection.
  std::function<bool(StreamWriter&)> stream;

  void SetContent(std::string content, std::string type);
  // Replaces every header `name` with one of `value`.
  void SetHeader(std::string_view name, std::string value);
  bool HasHeader(std::string_view name) const;
};

// "%41+b" → "A b" when `plus_is_space` (query strings), "A+b" otherwise (paths). A '%' not
// followed by two hex digits is kept as it is.
std::string PercentDecode(std::string_view text, bool plus_is_space);

// "a=1&b=x%20y&c" → {a: 1, b: "x y", c: ""}.
std::multimap<std::string, std::string> ParseQuery(std::string_view query);

}  // namespace tessera::api
