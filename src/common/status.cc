#include "common/status.h"

namespace l2s {

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
