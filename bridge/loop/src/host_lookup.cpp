#include "flockbridge/bridge/host_lookup.hpp"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <thread>
#include <utility>

namespace flockbridge::bridge {

/// What the thread and the loop share: the eventfd the thread writes when it
/// is done, and its answer. The last of the two to let go closes and frees.
struct HostLookup::State {
  int fd = -1;
  int error = 0;
  addrinfo* addresses = nullptr;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  State(State&&) = delete;
  State& operator=(State&&) = delete;
  ~State() {
    if (addresses != nullptr) ::freeaddrinfo(addresses);
    if (fd >= 0) ::close(fd);
  }
};

bool HostLookup::start(uv_loop_t* loop, const std::string& host, const std::string& service, Done done,
                       std::string& why) {
  cancel();
  auto state = std::make_shared<State>();
  state->fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (state->fd < 0) {
    why = std::strerror(errno);
    return false;
  }
  const int fd = state->fd;
  if (const int rc = poll_.init(this, [loop, fd](uv_poll_t* p) { return uv_poll_init(loop, p, fd); }); rc < 0) {
    why = uv_error_text(rc);
    return false;
  }
  uv_poll_start(poll_.get(), UV_READABLE, [](uv_poll_t* poll, int /*status*/, int /*events*/) {
    if (auto* self = owner_of<HostLookup>(poll)) self->answered();
  });
  try {
    std::thread([state, host, service] {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      state->error =
          ::getaddrinfo(host.c_str(), service.empty() ? nullptr : service.c_str(), &hints, &state->addresses);
      const std::uint64_t one = 1;
      [[maybe_unused]] const ssize_t written = ::write(state->fd, &one, sizeof(one));
    }).detach();
  } catch (const std::system_error& e) {
    poll_.reset();
    why = e.what();
    return false;
  }
  state_ = std::move(state);
  done_ = std::move(done);
  return true;
}

void HostLookup::answered() {
  // The handle goes before the state: its fd stays open until the state goes.
  poll_.reset();
  const std::shared_ptr<State> state = std::move(state_);
  Done done = std::move(done_);
  if (state && done) done(state->error, state->addresses);
}

void HostLookup::cancel() noexcept {
  poll_.reset();
  state_.reset();
  done_ = nullptr;
}

}  // namespace flockbridge::bridge
