#include "agent/kubernetes/testing/test_certificates.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace tessera::agent::k8s::testing {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct CertFree {
  void operator()(X509* cert) const { X509_free(cert); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

bool AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool added = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return added;
}

// A certificate for `key` named `cn`, signed by `issuer` / `issuer_key` (itself when null).
Cert MakeCert(const char* cn, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key, long serial,
              bool ca, const char* san, const char* usage) {
  Cert cert(X509_new());
  X509* x = cert.get();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : x;
  X509_set_issuer_name(x, X509_get_subject_name(signer));
  bool ok = AddExtension(x, signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
  if (ca) ok = ok && AddExtension(x, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  if (san != nullptr) ok = ok && AddExtension(x, signer, NID_subject_alt_name, san);
  if (usage != nullptr) ok = ok && AddExtension(x, signer, NID_ext_key_usage, usage);
  if (!ok || X509_sign(x, issuer_key != nullptr ? issuer_key : key, EVP_sha256()) == 0) {
    return nullptr;
  }
  return cert;
}

std::string Pem(X509* cert, EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (cert != nullptr) PEM_write_bio_X509(bio, cert);
  if (key != nullptr) PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(size));
  BIO_free(bio);
  return out;
}

}  // namespace

absl::StatusOr<TestPki> MakeTestPki() {
  Key ca_key(EVP_EC_gen("P-256"));
  Key server_key(EVP_EC_gen("P-256"));
  Key client_key(EVP_EC_gen("P-256"));
  if (!ca_key || !server_key || !client_key) return absl::InternalError("EC key generation failed");
  Cert ca = MakeCert("tessera-test-ca", ca_key.get(), nullptr, nullptr, 1, true, nullptr, nullptr);
  if (!ca) return absl::InternalError("CA certificate failed");
  Cert server = MakeCert("kube-apiserver", server_key.get(), ca.get(), ca_key.get(), 2, false,
                         "IP:127.0.0.1,DNS:localhost", "serverAuth");
  Cert client = MakeCert("tessera-agent", client_key.get(), ca.get(), ca_key.get(), 3, false,
                         nullptr, "clientAuth");
  if (!server || !client) return absl::InternalError("leaf certificate failed");
  return TestPki{.ca_pem = Pem(ca.get(), nullptr),
                 .server_cert_pem = Pem(server.get(), nullptr),
                 .server_key_pem = Pem(nullptr, server_key.get()),
                 .client_cert_pem = Pem(client.get(), nullptr),
                 .client_key_pem = Pem(nullptr, client_key.get())};
}

}  // namespace tessera::agent::k8s::testing
