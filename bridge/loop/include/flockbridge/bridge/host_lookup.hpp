// A host name looked up (getaddrinfo) on a thread of its own, its answer
// given on the loop. It stands in for libuv's uv_getaddrinfo in a loop that
// runs in a real-time class, for the reason work_queue.hpp gives (libuv's
// pool tells the loop through an async handle whose loop side spins). The
// thread says it is done with one write to an eventfd that the loop polls.
// The owner may stop waiting (cancel, or going) at any time: the thread then
// ends on its own, and nobody is told.
#pragma once

#include <netdb.h>
#include <uv.h>

#include <functional>
#include <memory>
#include <string>

#include "flockbridge/bridge/uv.hpp"

namespace flockbridge::bridge {

class HostLookup {
 public:
  /// `error`: 0, or getaddrinfo's EAI_ code (gai_strerror says it); the
  /// addresses are valid during the call.
  using Done = std::function<void(int error, const addrinfo* addresses)>;

  HostLookup() = default;
  HostLookup(const HostLookup&) = delete;  // its handle points at it
  HostLookup& operator=(const HostLookup&) = delete;
  HostLookup(HostLookup&&) = delete;
  HostLookup& operator=(HostLookup&&) = delete;
  ~HostLookup() { cancel(); }

  /// Looks `host` up for TCP connections to `service` (a port, or "" for
  /// none); `done` runs on `loop` once. False when it cannot start (then
  /// `why` says why): a lookup under way is cancelled first.
  bool start(uv_loop_t* loop, const std::string& host, const std::string& service, Done done, std::string& why);
  /// Stops waiting: `done` is not called.
  void cancel() noexcept;
  [[nodiscard]] bool running() const noexcept { return state_ != nullptr; }

 private:
  struct State;
  void answered();

  std::shared_ptr<State> state_;
  UvHandle<uv_poll_t> poll_;
  Done done_;
};

}  // namespace flockbridge::bridge
