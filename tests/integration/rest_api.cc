#include "rest_api.h"

#include <thread>
#include <utility>
#include <vector>

namespace tessera::integration {
namespace {

HttpAnswer Answer(const httplib::Result& res) {
  HttpAnswer answer;
  if (!res) {
    answer.transport_error = httplib::to_string(res.error());
    return answer;
  }
  answer.status = res->status;
  answer.text = res->body;
  answer.body = Json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (answer.body.is_discarded()) answer.body = nullptr;
  answer.headers = res->headers;
  return answer;
}

}  // namespace

std::string HttpAnswer::Header(const std::string& name) const {
  const auto found = headers.find(name);
  return found == headers.end() ? "" : found->second;
}

std::string HttpAnswer::ErrorCode() const {
  if (!body.is_object() || !body.contains("error") || !body["error"].is_object()) return "";
  return body["error"].value("code", "");
}

std::string HttpAnswer::ErrorField() const {
  if (!body.is_object() || !body.contains("error") || !body["error"].is_object()) return "";
  return body["error"].value("field", "");
}

RestApi::RestApi(std::string host, int port, std::string token)
    : host_(std::move(host)), port_(port), token_(std::move(token)) {}

httplib::Client RestApi::Client() const {
  httplib::Client client(host_, port_);
  client.set_connection_timeout(std::chrono::seconds(10));
  client.set_read_timeout(std::chrono::seconds(30));
  client.set_write_timeout(std::chrono::seconds(30));
  return client;
}

httplib::Headers RestApi::AuthHeaders() const {
  if (token_.empty()) return {};
  return {{"Authorization", "Bearer " + token_}};
}

HttpAnswer RestApi::Get(const std::string& path) const {
  return Answer(Client().Get(path.c_str(), AuthHeaders()));
}

HttpAnswer RestApi::Post(const std::string& path, const std::string& body,
                         const std::string& content_type) const {
  return Answer(Client().Post(path.c_str(), AuthHeaders(), body, content_type.c_str()));
}

HttpAnswer RestApi::Put(const std::string& path, const std::string& body,
                        const std::string& content_type) const {
  return Answer(Client().Put(path.c_str(), AuthHeaders(), body, content_type.c_str()));
}

HttpAnswer RestApi::Delete(const std::string& path) const {
  return Answer(Client().Delete(path.c_str(), AuthHeaders()));
}

HttpAnswer RestApi::StreamLines(const std::string& path,
                                const std::function<bool(const std::string&)>& on_line) const {
  std::string pending;
  httplib::Result res =
      Client().Get(path.c_str(), AuthHeaders(), [&](const char* data, size_t size) {
        pending.append(data, size);
        for (size_t end = pending.find('\n'); end != std::string::npos; end = pending.find('\n')) {
          const std::string line = pending.substr(0, end);
          pending.erase(0, end + 1);
          if (!on_line(line)) return false;
        }
        return true;
      });
  HttpAnswer answer;
  if (res) {
    answer.status = res->status;
    answer.headers = res->headers;
  } else {
    answer.transport_error = httplib::to_string(res.error());
  }
  answer.text = pending;
  return answer;
}

std::string RestApi::IssueToken(const std::string& tenant) const {
  const HttpAnswer answer = Post("/api/v1/tokens", Json{{"tenant", tenant}}.dump());
  if (answer.status != 201 || !answer.body.is_object()) return "";
  return answer.body.value("token", "");
}

Json RestApi::WaitForJob(const std::string& id, const std::function<bool(const Json&)>& done,
                         std::chrono::seconds timeout) const {
  Json last = nullptr;
  WaitUntil(
      [&] {
        const HttpAnswer answer = Job(id);
        if (answer.status != 200) return false;
        last = answer.body;
        return done(last);
      },
      timeout);
  return last;
}

Json RestApi::WaitForPhase(const std::string& id, std::initializer_list<std::string_view> phases,
                           std::chrono::seconds timeout) const {
  const std::vector<std::string_view> wanted(phases);
  return WaitForJob(
      id,
      [&](const Json& job) {
        const std::string phase = job["status"].value("phase", "");
        for (std::string_view p : wanted) {
          if (phase == p) return true;
        }
        return false;
      },
      timeout);
}

Json RestApi::WaitForEnd(const std::string& id, std::chrono::seconds timeout) const {
  return WaitForPhase(id, {"Succeeded", "Failed", "Cancelled"}, timeout);
}

bool IsTerminalPhase(std::string_view phase) {
  return phase == "Succeeded" || phase == "Failed" || phase == "Cancelled";
}

Json ShellJob(std::string_view name, std::string_view script) {
  Json job = {{"apiVersion", "tessera/v1"}, {"kind", "Job"}, {"metadata", Json::object()}};
  if (!name.empty()) job["metadata"]["name"] = name;
  job["spec"]["tasks"] = Json::array(
      {{{"name", "main"}, {"command", Json::array({"sh", "-c", std::string(script)})}}});
  return job;
}

std::vector<std::string> EventTypes(const Json& events_body) {
  std::vector<std::string> types;
  if (!events_body.is_object() || !events_body.contains("items")) return types;
  for (const Json& event : events_body["items"]) types.push_back(event.value("type", ""));
  return types;
}

bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace tessera::integration
