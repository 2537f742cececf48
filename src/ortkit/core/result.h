#pragma once
// Errors as values: Result<T> holds a value or an Error; Status is Result<void>.
// The library never throws past its own boundary; ONNX Runtime and protobuf exceptions are
// caught in the adapters and turned into an Error with context.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ortkit {

/// What went wrong, coarse enough to pick an exit code (ExitCodeFor in tools/ortkit/commands.h).
enum class ErrorKind {
  kInvalidArgument,  ///< the user's flags or request are wrong
  kNotFound,         ///< a file, input, dimension or provider that does not exist
  kIo,               ///< reading or writing failed
  kInvalidModel,     ///< the model file or its content is broken
  kRuntime,          ///< ONNX Runtime refused or failed
  kUnavailable,      ///< a resource is busy or missing (provider not built in, queue full)
  kInternal,         ///< a bug in ortkit
};

const char* ToString(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::kInternal;
  std::string message;
};

inline Error MakeError(ErrorKind kind, std::string message) { return Error{kind, std::move(message)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<Error>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    assert(!ok_);
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

inline Status OkStatus() { return Status(); }

}  // namespace ortkit

#define ORTKIT_CONCAT_INNER(a, b) a##b
#define ORTKIT_CONCAT(a, b) ORTKIT_CONCAT_INNER(a, b)

/// Returns the error of a failed Status or Result from the enclosing function.
#define ORTKIT_RETURN_IF_ERROR(expr)                         \
  do {                                                       \
    auto&& ortkit_status_ = (expr);                          \
    if (!ortkit_status_.ok()) return ortkit_status_.error(); \
  } while (false)

/// `ORTKIT_ASSIGN_OR_RETURN(auto x, MakeX());` binds the value or returns the error. `lhs` is a declaration
/// and `tmp` a name: neither can be parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define ORTKIT_ASSIGN_OR_RETURN(lhs, expr) \
  ORTKIT_ASSIGN_OR_RETURN_IMPL(ORTKIT_CONCAT(ortkit_result_, __LINE__), lhs, expr)
#define ORTKIT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.error();                 \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
