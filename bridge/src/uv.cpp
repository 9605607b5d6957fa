#include "flockbridge/bridge/uv.hpp"

namespace flockbridge::bridge {

std::string uv_error_text(int code) {
  return std::string(uv_strerror(code)) + " (" + uv_err_name(code) + ")";
}

void DeadlineTimer::start_at(SteadyTime deadline) {
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(deadline - steady_now());
  start_after(std::max(wait, std::chrono::milliseconds{0}));
}

void DeadlineTimer::start_after(std::chrono::milliseconds delay) {
  if (!timer_) return;
  // The loop's cached time may lag the steady clock that deadlines come
  // from; refresh it so that the timer cannot fire early.
  uv_update_time(timer_.get()->loop);
  uv_timer_start(timer_.get(), callback_, static_cast<std::uint64_t>(delay.count()), 0);
}

void DeadlineTimer::stop() noexcept {
  if (timer_) uv_timer_stop(timer_.get());
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

}  // namespace flockbridge::bridge
