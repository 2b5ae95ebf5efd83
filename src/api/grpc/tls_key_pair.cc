#include "api/grpc/tls_key_pair.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

namespace tessera::api {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};

std::unique_ptr<BIO, BioFree> ReadOnly(std::string_view pem) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

}  // namespace

absl::Status CheckTlsKeyPair(std::string_view cert_pem, std::string_view key_pem) {
  std::unique_ptr<X509, X509Free> cert(
      PEM_read_bio_X509(ReadOnly(cert_pem).get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    return absl::InvalidArgumentError("grpcTls.certFile: holds no PEM certificate");
  }
  // An empty passphrase: a key that needs one fails here instead of prompting on the terminal.
  char empty[] = "";
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      PEM_read_bio_PrivateKey(ReadOnly(key_pem).get(), nullptr, nullptr, empty));
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        "grpcTls.keyFile: holds no unencrypted PEM private key");
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    return absl::InvalidArgumentError(
        "grpcTls.keyFile: the private key is not the one of grpcTls.certFile's certificate");
  }
  return absl::OkStatus();
}

}  // namespace tessera::api
