#include "flockbridge/bridge/uv.hpp"

#include <time.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace flockbridge::bridge {

std::string uv_error_text(int code) {
  return std::string(uv_strerror(code)) + " (" + uv_err_name(code) + ")";
}

int DeadlineTimer::open(uv_loop_t* loop) {
  reset();
  fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (fd_ < 0) return uv_translate_sys_error(errno);
  const int rc = poll_.init(this, [loop, fd = fd_](uv_poll_t* p) { return uv_poll_init(loop, p, fd); });
  if (rc < 0) {
    ::close(fd_);
    fd_ = -1;
  }
  return rc;
}

void DeadlineTimer::reset() noexcept {
  // uv_close takes the descriptor out of the loop's epoll set at once, so
  // it may be closed right after; the handle's memory goes later.
  poll_.reset();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void DeadlineTimer::start_at(SteadyTime deadline) {
  // steady_clock is CLOCK_MONOTONIC on Linux: its count is the timerfd's.
  arm(std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count(), true);
}

void DeadlineTimer::start_after(std::chrono::nanoseconds delay) {
  arm(delay.count(), false);
}

void DeadlineTimer::arm(std::int64_t nanoseconds, bool absolute) {
  if (!poll_) return;
  constexpr std::int64_t kPerSecond = 1'000'000'000;
  itimerspec spec{};
  // A zero time would disarm the timer: a deadline that has passed is the
  // earliest one, which fires at once.
  nanoseconds = std::max<std::int64_t>(nanoseconds, 1);
  spec.it_value.tv_sec = static_cast<time_t>(nanoseconds / kPerSecond);
  spec.it_value.tv_nsec = static_cast<long>(nanoseconds % kPerSecond);
  // Setting the time forgets an expiry not read yet.
  ::timerfd_settime(fd_, absolute ? TFD_TIMER_ABSTIME : 0, &spec, nullptr);
  uv_poll_start(poll_.get(), UV_READABLE, [](uv_poll_t* poll, int status, int /*events*/) {
    auto* self = owner_of<DeadlineTimer>(poll);
    if (self == nullptr || status < 0) return;
    std::uint64_t expiries = 0;
    // Nothing to read: stopped or set again since the loop saw it ready.
    if (::read(self->fd_, &expiries, sizeof expiries) != static_cast<ssize_t>(sizeof expiries)) return;
    uv_poll_stop(poll);
    self->fire_(self->owner_);
  });
}

void DeadlineTimer::stop() noexcept {
  if (!poll_) return;
  const itimerspec disarmed{};
  ::timerfd_settime(fd_, 0, &disarmed, nullptr);
  uv_poll_stop(poll_.get());
}

void AfterPoll::schedule() noexcept {
  if (!check_ || !idle_) return;
  uv_check_start(check_.get(), [](uv_check_t* check) {
    auto* self = owner_of<AfterPoll>(check);
    if (self == nullptr) return;
    self->cancel();
    self->work_(self->owner_);
  });
  uv_idle_start(idle_.get(), [](uv_idle_t* /*idle*/) {});
}

void AfterPoll::cancel() noexcept {
  if (check_) uv_check_stop(check_.get());
  if (idle_) uv_idle_stop(idle_.get());
}

int LoopTurns::init(uv_loop_t* loop) {
  loop_ = loop;
  // The time the loop waits in its polls, for breathe(): asked before the
  // loop first runs (libuv counts it only when asked).
  metrics_ = uv_loop_configure(loop, UV_METRICS_IDLE_TIME) == 0;
  const int rc = prepare_.init(this, [loop](uv_prepare_t* p) { return uv_prepare_init(loop, p); });
  if (rc < 0) return rc;
  // Prepare callbacks run once a turn, just before the loop polls for I/O.
  uv_prepare_start(prepare_.get(), [](uv_prepare_t* prepare) {
    if (auto* self = owner_of<LoopTurns>(prepare)) self->next_turn();
  });
  uv_unref(reinterpret_cast<uv_handle_t*>(prepare_.get()));
  return 0;
}

void LoopTurns::breathe(std::chrono::nanoseconds busy, std::chrono::nanoseconds pause) noexcept {
  busy_limit_ = metrics_ ? busy : std::chrono::nanoseconds::zero();
  pause_ = pause;
  busy_since_ = steady_now();
}

void LoopTurns::next_turn() noexcept {
  ++turn_;
  if (busy_limit_ == std::chrono::nanoseconds::zero()) return;
  const std::uint64_t idle = uv_metrics_idle_time(loop_);
  const SteadyTime now = steady_now();
  if (idle != idle_ns_) {
    // The loop waited in a poll since the last turn: it gave its core away.
    idle_ns_ = idle;
    busy_since_ = now;
    return;
  }
  if (now - busy_since_ < busy_limit_) return;
  const timespec pause{0, static_cast<long>(pause_.count())};
  ::nanosleep(&pause, nullptr);
  ++pauses_;
  busy_since_ = steady_now();
}

bool TurnShare::has_time(SteadyTime now) noexcept {
  if (share_turn_ != turns_.turn()) {
    share_turn_ = turns_.turn();
    share_start_ = now;
    return true;
  }
  return now - share_start_ < share_;
}

}  // namespace flockbridge::bridge
