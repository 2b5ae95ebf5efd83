#include "store/etcd/etcd_channel.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace tessera::store::etcd {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* field) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(field, ": cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// One gRPC target for every endpoint: "ipv4:a:1,b:2" fails over between them; a single
// endpoint (a name or an address) is used as it is.
std::string Target(const std::vector<std::string>& endpoints) {
  if (endpoints.size() == 1) return endpoints.front();
  return absl::StrCat("ipv4:", absl::StrJoin(endpoints, ","));
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> Credentials(
    const EtcdStoreOptions& options) {
  if (!options.key_file.empty() && options.cert_file.empty()) {
    return absl::InvalidArgumentError("etcd.keyFile: needs etcd.certFile");
  }
  if (!options.cert_file.empty() && options.ca_file.empty()) {
    return absl::InvalidArgumentError("etcd.certFile: needs etcd.caFile (TLS)");
  }
  if (options.ca_file.empty()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  absl::StatusOr<std::string> ca = ReadPem(options.ca_file, "etcd.caFile");
  if (!ca.ok()) return ca.status();
  ssl.pem_root_certs = *ca;
  if (!options.cert_file.empty()) {
    absl::StatusOr<std::string> cert = ReadPem(options.cert_file, "etcd.certFile");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPem(options.key_file, "etcd.keyFile");
    if (!key.ok()) return key.status();
    ssl.pem_cert_chain = *cert;
    ssl.pem_private_key = *key;
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenEtcdChannel(const EtcdStoreOptions& options) {
  if (options.endpoints.empty()) {
    return absl::InvalidArgumentError("etcd.endpoints: at least one host:port");
  }
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = Credentials(options);
  if (!credentials.ok()) return credentials.status();
  // When the member in use goes, the channel moves to the next endpoint within a tenth of a
  // second, not after gRPC's default back-off of a second or more: a leader must renew its
  // lease within leaseTtl * 2/3 (etcd_election.h), 1.3 s at the shortest.
  grpc::ChannelArguments arguments;
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(Target(options.endpoints), *credentials, arguments);
  const auto deadline = std::chrono::system_clock::now() + options.request_timeout;
  if (!channel->WaitForConnected(deadline)) {
    return absl::UnavailableError(
        absl::StrCat("etcd: cannot connect to ", absl::StrJoin(options.endpoints, ", ")));
  }
  return channel;
}

}  // namespace tessera::store::etcd
