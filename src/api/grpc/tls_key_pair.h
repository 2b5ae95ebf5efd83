// The gRPC server's TLS key pair (grpcTls.certFile, grpcTls.keyFile in the server's config),
// checked before gRPC is given it: gRPC itself only fails to listen, without saying why.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace tessera::api {

// Checks that cert_pem holds a PEM certificate (the first of a chain), key_pem a PEM private
// key, and that the key is the certificate's. Errors (InvalidArgument) name the config field:
// "grpcTls.keyFile: the private key is not the one of grpcTls.certFile's certificate".
// Thread-safe.
absl::Status CheckTlsKeyPair(std::string_view cert_pem, std::string_view key_pem);

}  // namespace tessera::api
