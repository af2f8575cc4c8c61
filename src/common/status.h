// Status and StatusOr: expected failures (bad input, invalid strategies) are values, not
// exceptions or exits. Library code never calls exit(); the CLI maps a Status to an exit code.
// A message is always ONE printable line (see the constructor).
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace l2s {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,  // a user-supplied value is malformed or out of range
    kNotFound,         // a file, preset or field that does not exist
    kParseError,       // malformed JSON / text form
    kUnsupported,      // an architecture or feature l2s does not model
    kInvalid,          // a strategy that cannot run (does not divide, does not fit, breaks an SLO)
    kIoError,
    kCancelled,
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status ParseError(std::string m) { return Status(Code::kParseError, std::move(m)); }
  static Status Unsupported(std::string m) { return Status(Code::kUnsupported, std::move(m)); }
  static Status Invalid(std::string m) { return Status(Code::kInvalid, std::move(m)); }
  static Status IoError(std::string m) { return Status(Code::kIoError, std::move(m)); }
  static Status Cancelled(std::string m) { return Status(Code::kCancelled, std::move(m)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  // Every message is one printable line of at most kMaxMessageBytes (common/text.h): it may quote
  // user input holding newlines, bytes that are not UTF-8 or megabytes of text.
  Status(Code c, std::string m);
  Code code_ = Code::kOk;
  std::string message_;
};

// Either a value or a non-OK Status.
template <class T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}            // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {}    // NOLINT: implicit by design
  bool ok() const { return status_.ok() && value_.has_value(); }
  const Status& status() const { return status_; }
  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T& operator*() const& { return *value_; }
  T& operator*() & { return *value_; }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace l2s
