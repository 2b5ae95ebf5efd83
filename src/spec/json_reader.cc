#include "spec/json_reader.h"

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::spec {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Length of the valid UTF-8 sequence starting at text[i] (2..4; 1 for ASCII), or 0 when it is
// malformed (overlong, surrogate, beyond U+10FFFF, truncated): the ranges of RFC 3629.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char min_second = 0x80;
  unsigned char max_second = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) min_second = 0xA0;
    if (lead == 0xED) max_second = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) min_second = 0x90;
    if (lead == 0xF4) max_second = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < min_second || byte(i + 1) > max_second) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

// The value of four hex digits at text[i], or -1.
int32_t Hex4(std::string_view text, size_t i) {
  if (i + 4 > text.size()) return -1;
  int32_t value = 0;
  for (size_t k = i; k < i + 4; ++k) {
    const char c = text[k];
    int32_t digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

void AppendUtf8(uint32_t code_point, std::string& out) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

}  // namespace

void JsonReader::SkipSpace() {
  while (at_ < text_.size()) {
    const char c = text_[at_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
    ++at_;
  }
}

char JsonReader::Peek() {
  SkipSpace();
  return at_ < text_.size() ? text_[at_] : '\0';
}

bool JsonReader::Literal(std::string_view literal) {
  if (text_.substr(at_, literal.size()) != literal) return Fail();
  at_ += literal.size();
  return true;
}

bool JsonReader::ReadString(std::string& out) {
  out.clear();
  ++at_;  // the opening quote
  while (true) {
    const size_t run = at_;
    while (at_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[at_]);
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
      ++at_;
    }
    out.append(text_.data() + run, at_ - run);
    if (at_ >= text_.size()) return Fail();
    const unsigned char c = static_cast<unsigned char>(text_[at_]);
    if (c == '"') {
      ++at_;
      if (out.find('\0') != std::string::npos) saw_nul_ = true;
      return true;
    }
    if (c < 0x20) return Fail();
    if (c >= 0x80) {
      const size_t length = Utf8SequenceLength(text_, at_);
      if (length == 0) return Fail();
      out.append(text_.data() + at_, length);
      at_ += length;
      continue;
    }
    // An escape.
    if (at_ + 1 >= text_.size()) return Fail();
    const char escaped = text_[at_ + 1];
    at_ += 2;
    switch (escaped) {
      case '"':
      case '\\':
      case '/':
        out.push_back(escaped);
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        const int32_t unit = Hex4(text_, at_);
        if (unit < 0) return Fail();
        at_ += 4;
        uint32_t code_point = static_cast<uint32_t>(unit);
        if (unit >= 0xDC00 && unit <= 0xDFFF) return Fail();  // a low surrogate first
        if (unit >= 0xD800 && unit <= 0xDBFF) {
          if (text_.substr(at_, 2) != "\\u") return Fail();
          const int32_t low = Hex4(text_, at_ + 2);
          if (low < 0xDC00 || low > 0xDFFF) return Fail();
          at_ += 6;
          code_point = 0x10000 + ((code_point - 0xD800) << 10) + (low - 0xDC00);
        }
        AppendUtf8(code_point, out);
        break;
      }
      default:
        return Fail();
    }
  }
}

bool JsonReader::ReadNumber(std::string_view& literal) {
  const size_t start = at_;
  const auto digits = [&] {
    const size_t from = at_;
    while (at_ < text_.size() && IsDigit(text_[at_])) ++at_;
    return at_ > from;
  };
  if (at_ < text_.size() && text_[at_] == '-') ++at_;
  if (at_ < text_.size() && text_[at_] == '0') {
    ++at_;
  } else if (!digits()) {
    return Fail();
  }
  if (at_ < text_.size() && text_[at_] == '.') {
    ++at_;
    if (!digits()) return Fail();
  }
  if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
    ++at_;
    if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
    if (!digits()) return Fail();
  }
  literal = text_.substr(start, at_ - start);
  return true;
}

bool JsonReader::Open(bool object) {
  if (depth_ >= kMaxDepth) return Fail();
  ++at_;
  started_[depth_] = false;
  object_[depth_] = object;
  ++depth_;
  ++nodes_;
  return true;
}

bool JsonReader::NextMember(bool object) {
  if (!ok_ || depth_ == 0 || object_[depth_ - 1] != object) return Fail();
  const char close = object ? '}' : ']';
  const char c = Peek();
  if (c == close) {
    ++at_;
    --depth_;
    return false;
  }
  if (!started_[depth_ - 1]) {
    started_[depth_ - 1] = true;
    return true;
  }
  if (c != ',') return Fail();
  ++at_;
  return true;
}

bool JsonReader::AtNull() {
  if (!ok_ || Peek() != 'n') return false;
  if (!Literal("null")) return false;
  ++nodes_;
  return true;
}

bool JsonReader::BeginObject() {
  if (!ok_ || Peek() != '{') return Fail();
  return Open(/*object=*/true);
}

bool JsonReader::NextKey(std::string_view& key) {
  if (!NextMember(/*object=*/true)) return false;
  if (Peek() != '"' || !ReadString(key_)) return Fail();
  if (Peek() != ':') return Fail();
  ++at_;
  ++nodes_;
  key = key_;
  return true;
}

bool JsonReader::BeginArray() {
  if (!ok_ || Peek() != '[') return Fail();
  return Open(/*object=*/false);
}

bool JsonReader::BeginArrayIfNext() {
  if (!ok_ || Peek() != '[') return false;
  return Open(/*object=*/false);
}

bool JsonReader::NextItem() { return NextMember(/*object=*/false); }

bool JsonReader::String(std::string& out) {
  if (!ok_ || Peek() != '"') return Fail();
  if (!ReadString(out)) return false;
  ++nodes_;
  return true;
}

bool JsonReader::Scalar(std::string& out) {
  if (!ok_) return false;
  const char c = Peek();
  if (c == '"') return String(out);
  std::string_view literal;
  if (c == '-' || IsDigit(c)) {
    if (!ReadNumber(literal)) return false;
  } else if (c == 't') {
    if (!Literal("true")) return false;
    literal = "true";
  } else if (c == 'f') {
    if (!Literal("false")) return false;
    literal = "false";
  } else {
    return Fail();
  }
  out.assign(literal);
  ++nodes_;
  return true;
}

bool JsonReader::Integer(int64_t& out) {
  if (!ok_) return false;
  const char c = Peek();
  if (c != '-' && !IsDigit(c)) return Fail();
  std::string_view literal;
  if (!ReadNumber(literal)) return false;
  const char* end = literal.data() + literal.size();
  const auto [ptr, ec] = std::from_chars(literal.data(), end, out);
  if (ec != std::errc() || ptr != end) return Fail();
  ++nodes_;
  return true;
}

bool JsonReader::Bool(bool& out) {
  if (!ok_) return false;
  const char c = Peek();
  if (c == 't' && Literal("true")) {
    out = true;
  } else if (c == 'f' && Literal("false")) {
    out = false;
  } else {
    return Fail();
  }
  ++nodes_;
  return true;
}

bool JsonReader::Finish() {
  if (!ok_ || depth_ != 0) return false;
  SkipSpace();
  return at_ == text_.size();
}

}  // namespace tessera::spec
