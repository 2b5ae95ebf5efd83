#include "agent/kubernetes/api_access.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/strip.h"
#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace tessera::agent {
namespace {

namespace fs = std::filesystem;

// Reads a whole file; NotFound when it does not exist.
absl::StatusOr<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::error_code error;
    if (!fs::exists(path, error)) {
      return absl::NotFoundError(fmt::format("{} {}: no such file", what, path));
    }
    return absl::InvalidArgumentError(fmt::format("{} {}: cannot be read", what, path));
  }
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// One kubeconfig file being read: errors carry its path.
class Kubeconfig {
 public:
  Kubeconfig(std::string path, YAML::Node root) : path_(std::move(path)), root_(std::move(root)) {}

  absl::StatusOr<KubernetesApiAccess> Load(std::string_view context_name) const {
    std::string context = std::string(context_name);
    if (context.empty()) {
      absl::StatusOr<std::string> current = String(root_, "current-context", "current-context");
      if (!current.ok()) return current.status();
      if (current->empty()) return Error("current-context", "not set (or pass a context name)");
      context = *current;
    }
    absl::StatusOr<YAML::Node> ctx = Named("contexts", context, "context");
    if (!ctx.ok()) return ctx.status();
    const std::string ctx_path = fmt::format("contexts[name={}].context", context);
    absl::StatusOr<std::string> cluster_name = String(*ctx, "cluster", ctx_path + ".cluster");
    if (!cluster_name.ok()) return cluster_name.status();
    absl::StatusOr<std::string> user_name = String(*ctx, "user", ctx_path + ".user");
    if (!user_name.ok()) return user_name.status();
    if (cluster_name->empty()) return Error(ctx_path + ".cluster", "not set");

    KubernetesApiAccess access;
    if (absl::Status status = LoadCluster(*cluster_name, access); !status.ok()) return status;
    if (user_name->empty()) return Error(ctx_path + ".user", "not set");
    if (absl::Status status = LoadUser(*user_name, access); !status.ok()) return status;
    return access;
  }

 private:
  absl::Status Error(std::string_view field, std::string_view what) const {
    return absl::InvalidArgumentError(fmt::format("kubeconfig {}: {}: {}", path_, field, what));
  }

  // A scalar member as text; "" when missing.
  absl::StatusOr<std::string> String(const YAML::Node& map, const char* key,
                                     std::string_view field) const {
    const YAML::Node value = map[key];
    if (!value || value.IsNull()) return std::string();
    if (!value.IsScalar()) return Error(field, "must be a string");
    return value.Scalar();
  }

  // The `what` member of the entry of list `list` whose name is `name`.
  absl::StatusOr<YAML::Node> Named(const char* list, const std::string& name,
                                   const char* what) const {
    const YAML::Node entries = root_[list];
    if (entries && !entries.IsNull() && !entries.IsSequence()) {
      return Error(list, "must be a list");
    }
    if (entries && entries.IsSequence()) {
      for (size_t i = 0; i < entries.size(); ++i) {
        const YAML::Node entry = entries[i];
        if (!entry.IsMap() || !entry["name"] || !entry["name"].IsScalar() ||
            entry["name"].Scalar() != name) {
          continue;
        }
        const YAML::Node body = entry[what];
        if (!body || !body.IsMap()) {
          return Error(fmt::format("{}[name={}].{}", list, name, what), "must be a map");
        }
        return body;
      }
    }
    return Error(fmt::format("{}[name={}]", list, name), "not found");
  }

  // A path given in the kubeconfig, relative to the kubeconfig's directory.
  std::string Resolve(const std::string& file) const {
    if (file.empty() || fs::path(file).is_absolute()) return file;
    return (fs::path(path_).parent_path() / file).string();
  }

  absl::StatusOr<std::string> Base64(const std::string& text, std::string_view field) const {
    std::string decoded;
    if (!absl::Base64Unescape(text, &decoded)) return Error(field, "not valid base64");
    return decoded;
  }

  // `<key>-data` (base64) or `<key>` (a file), read as PEM text; "" when neither is set.
  absl::StatusOr<std::string> DataOrFile(const YAML::Node& map, const std::string& key,
                                         const std::string& field) const {
    absl::StatusOr<std::string> data = String(map, (key + "-data").c_str(), field + "-data");
    if (!data.ok()) return data.status();
    if (!data->empty()) return Base64(*data, field + "-data");
    absl::StatusOr<std::string> file = String(map, key.c_str(), field);
    if (!file.ok()) return file.status();
    if (file->empty()) return std::string();
    absl::StatusOr<std::string> text = ReadFile(Resolve(*file), "file");
    if (!text.ok()) return Error(field, std::string(text.status().message()));
    return text;
  }

  absl::Status LoadCluster(const std::string& name, KubernetesApiAccess& access) const {
    absl::StatusOr<YAML::Node> cluster = Named("clusters", name, "cluster");
    if (!cluster.ok()) return cluster.status();
    const std::string field = fmt::format("clusters[name={}].cluster", name);
    absl::StatusOr<std::string> server = String(*cluster, "server", field + ".server");
    if (!server.ok()) return server.status();
    if (server->empty()) return Error(field + ".server", "not set");
    access.server = *server;
    absl::StatusOr<std::string> ca_data =
        String(*cluster, "certificate-authority-data", field + ".certificate-authority-data");
    if (!ca_data.ok()) return ca_data.status();
    if (!ca_data->empty()) {
      absl::StatusOr<std::string> pem = Base64(*ca_data, field + ".certificate-authority-data");
      if (!pem.ok()) return pem.status();
      access.ca_data = *pem;
    }
    absl::StatusOr<std::string> ca_file =
        String(*cluster, "certificate-authority", field + ".certificate-authority");
    if (!ca_file.ok()) return ca_file.status();
    access.ca_file = Resolve(*ca_file);
    const YAML::Node insecure = (*cluster)["insecure-skip-tls-verify"];
    if (insecure && !insecure.IsNull()) {
      if (!insecure.IsScalar() || (insecure.Scalar() != "true" && insecure.Scalar() != "false")) {
        return Error(field + ".insecure-skip-tls-verify", "must be true or false");
      }
      access.insecure_skip_verify = insecure.Scalar() == "true";
    }
    return absl::OkStatus();
  }

  absl::Status LoadUser(const std::string& name, KubernetesApiAccess& access) const {
    absl::StatusOr<YAML::Node> user = Named("users", name, "user");
    if (!user.ok()) return user.status();
    const std::string field = fmt::format("users[name={}].user", name);
    absl::StatusOr<std::string> token = String(*user, "token", field + ".token");
    if (!token.ok()) return token.status();
    access.token = *token;
    absl::StatusOr<std::string> token_file = String(*user, "tokenFile", field + ".tokenFile");
    if (!token_file.ok()) return token_file.status();
    access.token_file = Resolve(*token_file);
    absl::StatusOr<std::string> cert =
        DataOrFile(*user, "client-certificate", field + ".client-certificate");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = DataOrFile(*user, "client-key", field + ".client-key");
    if (!key.ok()) return key.status();
    if (cert->empty() != key->empty()) {
      return Error(field, "client-certificate(-data) and client-key(-data) go together");
    }
    access.client_certificate_data = *cert;
    access.client_key_data = *key;
    if (access.token.empty() && access.token_file.empty() && cert->empty()) {
      const bool plugin = (*user)["exec"] || (*user)["auth-provider"];
      return Error(field, plugin ? "exec and auth-provider credential plugins are not "
                                   "supported: set token, tokenFile or client-certificate-data"
                                 : "no credentials: set token, tokenFile or "
                                   "client-certificate(-data) with client-key(-data)");
    }
    return absl::OkStatus();
  }

  std::string path_;
  YAML::Node root_;
};

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string Trimmed(std::string text) { return std::string(absl::StripAsciiWhitespace(text)); }

}  // namespace

absl::StatusOr<KubernetesApiAccess> LoadKubeconfig(const std::string& path,
                                                   std::string_view context) {
  absl::StatusOr<std::string> text = ReadFile(path, "kubeconfig");
  if (!text.ok()) return text.status();
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("kubeconfig {}: not valid YAML: {}", path, e.what()));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(fmt::format("kubeconfig {}: must be a map", path));
  }
  try {
    return Kubeconfig(path, root).Load(context);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("kubeconfig {}: {}", path, e.what()));
  }
}

std::string DefaultKubeconfigPath() {
  const std::string list = Env("KUBECONFIG");
  if (!list.empty()) return list.substr(0, list.find(':'));
  return (fs::path(Env("HOME")) / ".kube" / "config").string();
}

InClusterEnvironment InClusterEnvironmentFromProcess() {
  return {.service_host = Env("KUBERNETES_SERVICE_HOST"),
          .service_port = Env("KUBERNETES_SERVICE_PORT")};
}

bool IsInCluster(const InClusterEnvironment& env) {
  std::error_code error;
  return !env.service_host.empty() &&
         fs::exists(fs::path(env.root) / kServiceAccountDir / "token", error);
}

absl::StatusOr<KubernetesApiAccess> LoadInClusterAccess(const InClusterEnvironment& env) {
  if (env.service_host.empty() || env.service_port.empty()) {
    return absl::InvalidArgumentError(
        "in-cluster configuration: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be "
        "set (is this process running in a pod?)");
  }
  const fs::path dir = fs::path(env.root) / kServiceAccountDir;
  KubernetesApiAccess access;
  const bool ipv6 = env.service_host.find(':') != std::string::npos;
  access.server = fmt::format("https://{}{}{}:{}", ipv6 ? "[" : "", env.service_host,
                              ipv6 ? "]" : "", env.service_port);
  access.token_file = (dir / "token").string();
  absl::StatusOr<std::string> token = ReadFile(access.token_file, "service account token");
  if (!token.ok()) return token.status();
  if (Trimmed(*token).empty()) {
    return absl::InvalidArgumentError(
        fmt::format("service account token {}: empty", access.token_file));
  }
  access.ca_file = (dir / "ca.crt").string();
  if (absl::StatusOr<std::string> ca = ReadFile(access.ca_file, "service account CA"); !ca.ok()) {
    return ca.status();
  }
  if (absl::StatusOr<std::string> ns = ReadFile((dir / "namespace").string(), "namespace");
      ns.ok() && !Trimmed(*ns).empty()) {
    access.kube_namespace = Trimmed(*ns);
  }
  return access;
}

absl::StatusOr<KubernetesApiAccess> ResolveApiAccess(const std::string& kubeconfig,
                                                     const std::string& kube_namespace,
                                                     const InClusterEnvironment& env) {
  absl::StatusOr<KubernetesApiAccess> access;
  if (!kubeconfig.empty()) {
    access = LoadKubeconfig(kubeconfig);
  } else if (IsInCluster(env)) {
    access = LoadInClusterAccess(env);
  } else {
    const std::string path = DefaultKubeconfigPath();
    access = LoadKubeconfig(path);
    if (access.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(fmt::format(
          "no Kubernetes API access: no kubeconfig at {} (pass --kubeconfig or set KUBECONFIG) "
          "and not running in a pod (KUBERNETES_SERVICE_HOST and the service account token)",
          path));
    }
  }
  if (access.ok() && !kube_namespace.empty()) access->kube_namespace = kube_namespace;
  return access;
}

}  // namespace tessera::agent
