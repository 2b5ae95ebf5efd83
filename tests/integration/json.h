// Json for the integration tests: nlohmann::json whose checked accesses throw instead of
// asserting. Reading a key that a server answer lacks (`job["status"]` on a const document)
// then fails the test with the exception GoogleTest reports, instead of undefined behaviour.
// Include this header, never nlohmann/json.hpp directly, in the integration tests: the macro
// must be defined before the library is first read.
#pragma once

#include <stdexcept>
#include <string>

namespace tessera::integration {

// Throws std::logic_error naming the failed check (JSON_ASSERT's handler below). In the few
// noexcept internals of the library where JSON_ASSERT also appears, this ends the program just
// as assert() would.
[[noreturn]] inline void JsonAccessFailed(const char* condition) {
  throw std::logic_error(std::string("JSON access without a value: ") + condition);
}

}  // namespace tessera::integration

#ifndef JSON_ASSERT
#define JSON_ASSERT(condition) \
  ((condition) ? static_cast<void>(0) : ::tessera::integration::JsonAccessFailed(#condition))
#endif
#include "nlohmann/json.hpp"

namespace tessera::integration {

using Json = nlohmann::json;

}  // namespace tessera::integration
