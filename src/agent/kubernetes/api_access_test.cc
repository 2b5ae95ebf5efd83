#include "agent/kubernetes/api_access.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"

namespace tessera::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tessera-k8s-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    const fs::path file = fs::path(path_) / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Kubeconfig(const std::string& cluster, const std::string& user,
                       const std::string& current = "ctx") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: " + current +
         "\n"
         "contexts:\n"
         "- name: other\n  context: {cluster: c, user: nobody}\n"
         "- name: ctx\n  context: {cluster: c, user: u, namespace: default}\n"
         "clusters:\n- name: c\n  cluster:\n" +
         cluster + "users:\n- name: u\n  user:\n" + user;
}

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST(LoadKubeconfigTest, TokenAndInlineCa) {
  TempDir dir;
  const std::string ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  const std::string path = dir.Write("config", Kubeconfig("    server: https://10.0.0.1:6443\n"
                                                          "    certificate-authority-data: " +
                                                              absl::Base64Escape(ca) + "\n",
                                                          "    token: abc.def\n"));
  absl::StatusOr<KubernetesApiAccess> access = LoadKubeconfig(path);
  ASSERT_TRUE(access.ok()) << access.status();
  EXPECT_EQ(access->server, "https://10.0.0.1:6443");
  EXPECT_EQ(access->token, "abc.def");
  EXPECT_EQ(access->ca_data, ca);
  EXPECT_FALSE(access->insecure_skip_verify);
  EXPECT_EQ(access->kube_namespace, "tessera");  // the context's namespace is not used
}

TEST(LoadKubeconfigTest, FilesAreRelativeToTheKubeconfig) {
  TempDir dir;
  dir.Write("pki/cert.pem", "CERT");
  dir.Write("pki/key.pem", "KEY");
  const std::string path = dir.Write("config", Kubeconfig("    server: https://api.example:443\n"
                                                          "    certificate-authority: pki/ca.crt\n"
                                                          "    insecure-skip-tls-verify: true\n",
                                                          "    tokenFile: secrets/token\n"
                                                          "    client-certificate: pki/cert.pem\n"
                                                          "    client-key: pki/key.pem\n"));
  absl::StatusOr<KubernetesApiAccess> access = LoadKubeconfig(path);
  ASSERT_TRUE(access.ok()) << access.status();
  EXPECT_EQ(access->ca_file, (fs::path(dir.path()) / "pki/ca.crt").string());
  EXPECT_EQ(access->token_file, (fs::path(dir.path()) / "secrets/token").string());
  EXPECT_EQ(access->client_certificate_data, "CERT");
  EXPECT_EQ(access->client_key_data, "KEY");
  EXPECT_TRUE(access->insecure_skip_verify);
}

TEST(LoadKubeconfigTest, ANamedContext) {
  TempDir dir;
  const std::string path =
      dir.Write("config", Kubeconfig("    server: http://127.0.0.1:8080\n", "    token: t\n"));
  absl::StatusOr<KubernetesApiAccess> access = LoadKubeconfig(path, "other");
  ASSERT_FALSE(access.ok());
  EXPECT_THAT(Message(access.status()), HasSubstr("users[name=nobody]: not found"));
}

TEST(LoadKubeconfigTest, ErrorsNameTheFileAndField) {
  struct Case {
    std::string text;
    std::string error;
  };
  const std::string server = "    server: https://x:6443\n";
  const std::vector<Case> cases = {
      {"a: [", "not valid YAML"},
      {"- 1\n", "must be a map"},
      {"kind: Config\n", "current-context: not set"},
      {Kubeconfig(server, "    token: t\n", "missing"), "contexts[name=missing]: not found"},
      {Kubeconfig("    insecure-skip-tls-verify: true\n", "    token: t\n"),
       "clusters[name=c].cluster.server: not set"},
      {Kubeconfig(server, "    username: me\n"),
       "users[name=u].user: no credentials: set token, tokenFile or client-certificate"},
      {Kubeconfig(server, "    exec: {command: aws}\n"),
       "users[name=u].user: exec and auth-provider credential plugins are not supported"},
      {Kubeconfig(server + "    certificate-authority-data: '!!notbase64'\n", "    token: t\n"),
       "clusters[name=c].cluster.certificate-authority-data: not valid base64"},
      {Kubeconfig(server + "    insecure-skip-tls-verify: maybe\n", "    token: t\n"),
       "insecure-skip-tls-verify: must be true or false"},
      {Kubeconfig(server, "    client-certificate-data: Q0VSVA==\n"),
       "client-certificate(-data) and client-key(-data) go together"},
      {Kubeconfig(server, "    client-certificate: nowhere.pem\n    client-key: nowhere.pem\n"),
       "users[name=u].user.client-certificate: file"},
      {Kubeconfig("    server: [1, 2]\n", "    token: t\n"),
       "clusters[name=c].cluster.server: must be a string"},
      {"current-context: ctx\ncontexts: 5\n", "contexts: must be a list"},
  };
  TempDir dir;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].error);
    const std::string path = dir.Write("config" + std::to_string(i), cases[i].text);
    absl::StatusOr<KubernetesApiAccess> access = LoadKubeconfig(path);
    ASSERT_FALSE(access.ok());
    EXPECT_EQ(access.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(access.status()),
                AllOf(HasSubstr("kubeconfig " + path), HasSubstr(cases[i].error)));
  }
}

TEST(LoadKubeconfigTest, MissingFileIsNotFound) {
  EXPECT_EQ(LoadKubeconfig("/nonexistent/kubeconfig").status().code(), absl::StatusCode::kNotFound);
}

TEST(DefaultKubeconfigPathTest, KubeconfigVariableThenHome) {
  setenv("KUBECONFIG", "/a/one:/b/two", 1);
  EXPECT_EQ(DefaultKubeconfigPath(), "/a/one");
  unsetenv("KUBECONFIG");
  setenv("HOME", "/home/me", 1);
  EXPECT_EQ(DefaultKubeconfigPath(), "/home/me/.kube/config");
}

TEST(InClusterTest, ReadsTheServiceAccount) {
  TempDir root;
  const std::string dir = std::string(kServiceAccountDir);
  InClusterEnvironment env{.service_host = "10.96.0.1", .service_port = "443", .root = root.path()};
  EXPECT_FALSE(IsInCluster(env));
  root.Write(dir + "/token", "tok\n");
  root.Write(dir + "/ca.crt", "CA");
  root.Write(dir + "/namespace", "gpu-jobs\n");
  EXPECT_TRUE(IsInCluster(env));
  absl::StatusOr<KubernetesApiAccess> access = LoadInClusterAccess(env);
  ASSERT_TRUE(access.ok()) << access.status();
  EXPECT_EQ(access->server, "https://10.96.0.1:443");
  EXPECT_EQ(access->token_file, root.path() + "/" + dir + "/token");
  EXPECT_EQ(access->ca_file, root.path() + "/" + dir + "/ca.crt");
  EXPECT_EQ(access->kube_namespace, "gpu-jobs");

  env.service_host = "fd00::1";
  EXPECT_EQ(LoadInClusterAccess(env)->server, "https://[fd00::1]:443");
}

TEST(InClusterTest, Errors) {
  TempDir root;
  InClusterEnvironment env{.root = root.path()};
  EXPECT_THAT(Message(LoadInClusterAccess(env).status()), HasSubstr("KUBERNETES_SERVICE_HOST"));
  env.service_host = "10.96.0.1";
  env.service_port = "443";
  EXPECT_EQ(LoadInClusterAccess(env).status().code(), absl::StatusCode::kNotFound);
  root.Write(std::string(kServiceAccountDir) + "/token", " \n");
  EXPECT_THAT(Message(LoadInClusterAccess(env).status()), HasSubstr("empty"));
  root.Write(std::string(kServiceAccountDir) + "/token", "tok");
  EXPECT_THAT(Message(LoadInClusterAccess(env).status()), HasSubstr("service account CA"));
}

TEST(ResolveApiAccessTest, KubeconfigFlagThenInClusterThenTheDefault) {
  TempDir dir;
  const std::string config =
      dir.Write("config", Kubeconfig("    server: https://from-kubeconfig\n", "    token: t\n"));
  TempDir root;
  root.Write(std::string(kServiceAccountDir) + "/token", "tok");
  root.Write(std::string(kServiceAccountDir) + "/ca.crt", "CA");
  const InClusterEnvironment pod{
      .service_host = "10.96.0.1", .service_port = "443", .root = root.path()};
  const InClusterEnvironment outside{.root = root.path()};

  EXPECT_EQ(ResolveApiAccess(config, "", pod)->server, "https://from-kubeconfig");
  EXPECT_EQ(ResolveApiAccess("", "", pod)->server, "https://10.96.0.1:443");
  EXPECT_EQ(ResolveApiAccess("", "gpu", pod)->kube_namespace, "gpu");
  setenv("KUBECONFIG", config.c_str(), 1);
  EXPECT_EQ(ResolveApiAccess("", "", outside)->server, "https://from-kubeconfig");
  setenv("KUBECONFIG", (dir.path() + "/missing").c_str(), 1);
  absl::StatusOr<KubernetesApiAccess> none = ResolveApiAccess("", "", outside);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(none.status()), AllOf(HasSubstr("--kubeconfig"), HasSubstr("pod")));
  unsetenv("KUBECONFIG");
}

}  // namespace
}  // namespace tessera::agent
