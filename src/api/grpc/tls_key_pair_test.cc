#include "api/grpc/tls_key_pair.h"

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera::api {
namespace {

using ::testing::HasSubstr;

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

Key NewKey() { return Key(EVP_EC_gen("P-256")); }

std::string Drain(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string text(data, static_cast<size_t>(size));
  BIO_free(bio);
  return text;
}

std::string KeyPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  return Drain(bio);
}

// A self-signed certificate for 127.0.0.1 over key.
std::string CertPem(EVP_PKEY* key) {
  X509* cert = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_sign(cert, key, EVP_sha256());
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  X509_free(cert);
  return Drain(bio);
}

TEST(TlsKeyPairTest, TheCertificatesOwnKeyIsAccepted) {
  const Key key = NewKey();
  ASSERT_NE(key, nullptr);
  EXPECT_TRUE(CheckTlsKeyPair(CertPem(key.get()), KeyPem(key.get())).ok());
}

TEST(TlsKeyPairTest, AnotherKeyIsRefusedNamingTheKeyFile) {
  const Key key = NewKey();
  const Key other = NewKey();
  const absl::Status status = CheckTlsKeyPair(CertPem(key.get()), KeyPem(other.get()));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("grpcTls.keyFile: the private key is not the one of grpcTls.certFile"));
}

TEST(TlsKeyPairTest, SwappedOrEmptyFilesAreRefusedNamingTheField) {
  const Key key = NewKey();
  const std::string cert = CertPem(key.get());
  const std::string private_key = KeyPem(key.get());
  EXPECT_EQ(std::string(CheckTlsKeyPair(private_key, cert).message()),
            "grpcTls.certFile: holds no PEM certificate");
  EXPECT_EQ(std::string(CheckTlsKeyPair(cert, cert).message()),
            "grpcTls.keyFile: holds no unencrypted PEM private key");
  EXPECT_EQ(std::string(CheckTlsKeyPair("", "").message()),
            "grpcTls.certFile: holds no PEM certificate");
}

TEST(TlsKeyPairTest, AnEncryptedKeyIsRefusedWithoutPrompting) {
  const Key key = NewKey();
  BIO* bio = BIO_new(BIO_s_mem());
  char passphrase[] = "secret";
  PEM_write_bio_PrivateKey(bio, key.get(), EVP_aes_256_cbc(), nullptr, 0, nullptr, passphrase);
  EXPECT_EQ(std::string(CheckTlsKeyPair(CertPem(key.get()), Drain(bio)).message()),
            "grpcTls.keyFile: holds no unencrypted PEM private key");
}

}  // namespace
}  // namespace tessera::api
