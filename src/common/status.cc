#include "common/status.h"

#include "common/text.h"

namespace l2s {

Status::Status(Code c, std::string m) : code_(c) {
  // Newlines become spaces (a message may join lines on purpose); everything else that would
  // not print on one line is escaped, and long messages are clipped.
  for (char& ch : m)
    if (ch == '\n') ch = ' ';
  bool plain = m.size() <= kMaxMessageBytes;
  for (size_t i = 0; plain && i < m.size(); ++i) {
    const auto b = static_cast<unsigned char>(m[i]);
    plain = b >= 0x20 && b < 0x7F;
  }
  message_ = plain ? std::move(m) : PrintableText(m, kMaxMessageBytes);
}

std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: return "invalid argument: " + message_;
    case Code::kNotFound: return "not found: " + message_;
    case Code::kParseError: return "parse error: " + message_;
    case Code::kUnsupported: return "unsupported: " + message_;
    case Code::kInvalid: return "invalid: " + message_;
    case Code::kIoError: return "I/O error: " + message_;
    case Code::kCancelled: return "cancelled: " + message_;
  }
  return message_;
}

}  // namespace l2s
