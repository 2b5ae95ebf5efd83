// RestApi: a small client of the REST API (docs/api.md) for the integration tests, over
// cpp-httplib, with one bearer token; plus the job documents and waits the tests share.
//
// Every call returns an HttpAnswer: the HTTP status (0 when the request got no answer: the
// server is down or restarting), the body as text and as parsed JSON (null when it is not JSON)
// and the headers. Nothing throws. Timeouts: 10 s to connect, 30 s to read — bounds that only
// keep a broken server from hanging a test.
// Thread-safety: a RestApi is immutable; each call opens its own connection, so one RestApi may
// be used from many threads at once.
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "json.h"

namespace tessera::integration {

struct HttpAnswer {
  int status = 0;  // 0: no answer (connection refused, reset, timed out)
  std::string text;
  Json body;  // null when the body is not JSON
  httplib::Headers headers;
  std::string transport_error;  // why there was no answer

  // The value of header `name`, "" when absent.
  std::string Header(const std::string& name) const;
  // The error body's code and field ("" when absent).
  std::string ErrorCode() const;
  std::string ErrorField() const;
};

class RestApi {
 public:
  RestApi(std::string host, int port, std::string token);

  RestApi WithToken(std::string token) const { return RestApi(host_, port_, std::move(token)); }

  HttpAnswer Get(const std::string& path) const;
  HttpAnswer Post(const std::string& path, const std::string& body,
                  const std::string& content_type = "application/json") const;
  HttpAnswer Put(const std::string& path, const std::string& body,
                 const std::string& content_type = "application/json") const;
  HttpAnswer Delete(const std::string& path) const;

  // GETs a stream of lines (the NDJSON watch), calling `on_line` with each complete line until
  // it returns false or the stream ends. The answer's text is what followed the last line.
  HttpAnswer StreamLines(const std::string& path,
                         const std::function<bool(const std::string&)>& on_line) const;

  // POST /api/v1/jobs with a JSON document.
  HttpAnswer Submit(const Json& job) const { return Post("/api/v1/jobs", job.dump()); }
  // GET /api/v1/jobs/{id}.
  HttpAnswer Job(const std::string& id) const { return Get("/api/v1/jobs/" + id); }
  // POST /api/v1/tokens as this (admin) token; the new token, "" on failure.
  std::string IssueToken(const std::string& tenant) const;

  // Polls the job until `done(job)` or `timeout`; returns the last job seen (null if none).
  Json WaitForJob(const std::string& id, const std::function<bool(const Json&)>& done,
                  std::chrono::seconds timeout = std::chrono::seconds(120)) const;
  // WaitForJob until status.phase is one of `phases`.
  Json WaitForPhase(const std::string& id, std::initializer_list<std::string_view> phases,
                    std::chrono::seconds timeout = std::chrono::seconds(120)) const;
  // WaitForPhase until Succeeded, Failed or Cancelled.
  Json WaitForEnd(const std::string& id,
                  std::chrono::seconds timeout = std::chrono::seconds(120)) const;

 private:
  httplib::Client Client() const;
  httplib::Headers AuthHeaders() const;

  std::string host_;
  int port_;
  std::string token_;
};

// Whether `phase` is Succeeded, Failed or Cancelled.
bool IsTerminalPhase(std::string_view phase);

// A job document with one task group "main" running `sh -c script`.
Json ShellJob(std::string_view name, std::string_view script);

// The event types of GET /api/v1/jobs/{id}/events, in order.
std::vector<std::string> EventTypes(const Json& events_body);

// Polls `condition` every 50 ms until it holds or `timeout` passes; returns its last value.
bool WaitUntil(const std::function<bool()>& condition,
               std::chrono::milliseconds timeout = std::chrono::seconds(120));

}  // namespace tessera::integration
