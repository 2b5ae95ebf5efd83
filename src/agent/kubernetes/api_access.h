// KubernetesApiAccess: where the Kubernetes API server is and how to authenticate to it, as
// kubectl and in-cluster clients find it.
//
// Two loaders fill it:
//   LoadKubeconfig    a kubeconfig file (kubectl's): its current context (or a named one) gives
//                     the cluster (server, certificate-authority or certificate-authority-data,
//                     insecure-skip-tls-verify) and the user (token, tokenFile, or
//                     client-certificate(-data) with client-key(-data)). Relative paths are
//                     taken from the kubeconfig's directory. exec and auth-provider plugins are
//                     not supported. The context's namespace is not used: Tessera's pods go
//                     to `kube_namespace` ("tessera" unless set).
//   LoadInClusterAccess  inside a pod: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
//                     with the service account's token (re-read before every request, since
//                     the kubelet rotates it), ca.crt and namespace from
//                     <root>/var/run/secrets/kubernetes.io/serviceaccount/.
// Errors: InvalidArgument naming the file and the field that is missing or malformed
// ("kubeconfig /home/me/.kube/config: users[name=admin].user: no credentials ..."), NotFound
// for a file that does not exist. Thread-safe: pure functions over the file system.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tessera::agent {

inline constexpr std::string_view kServiceAccountDir =
    "var/run/secrets/kubernetes.io/serviceaccount";

struct KubernetesApiAccess {
  // "https://10.0.0.1:6443", "http://127.0.0.1:8080"; a path after the authority is a prefix
  // of every API path (an API proxy's).
  std::string server;
  std::string token;                  // bearer token, sent as "Authorization: Bearer <token>"
  std::string token_file;             // a file holding the bearer token, read before every request
  std::string ca_file;                // PEM certificates that sign the server's certificate
  std::string ca_data;                // the same, inline (PEM)
  bool insecure_skip_verify = false;  // https without checking the server's certificate
  std::string client_certificate_data;     // PEM, with client_key_data: TLS client authentication
  std::string client_key_data;             // PEM
  std::string kube_namespace = "tessera";  // where Tessera's pods are created and watched
};

// Loads `path` (kubectl's format). `context` "" means the file's current-context.
absl::StatusOr<KubernetesApiAccess> LoadKubeconfig(const std::string& path,
                                                   std::string_view context = "");

// $KUBECONFIG (its first entry when it lists several) or $HOME/.kube/config.
std::string DefaultKubeconfigPath();

struct InClusterEnvironment {
  std::string service_host;  // $KUBERNETES_SERVICE_HOST
  std::string service_port;  // $KUBERNETES_SERVICE_PORT
  std::string root = "/";    // the service account directory is under it (tests use a temp dir)
};

// The process's environment (root "/").
InClusterEnvironment InClusterEnvironmentFromProcess();

// True when `env` names the API service and the service account's token file exists.
bool IsInCluster(const InClusterEnvironment& env);

absl::StatusOr<KubernetesApiAccess> LoadInClusterAccess(const InClusterEnvironment& env);

// What `tessera agent --backend kubernetes` uses, from its flags: the kubeconfig at
// `kubeconfig` when given (--kubeconfig); else the in-cluster access when `env` is a pod's;
// else the kubeconfig at DefaultKubeconfigPath(). A non-empty `kube_namespace`
// (--kube-namespace) replaces the namespace. Errors: the loader's, and NotFound naming both
// ways when neither a kubeconfig nor a pod's service account is there.
absl::StatusOr<KubernetesApiAccess> ResolveApiAccess(const std::string& kubeconfig,
                                                     const std::string& kube_namespace,
                                                     const InClusterEnvironment& env);

}  // namespace tessera::agent
