#include "flockbridge/bridge/output_queue.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace flockbridge::bridge {

bool OutputQueue::push_sensor(SharedBuffer message) {
  const auto waiting = std::find_if(queue_.rbegin(), queue_.rend(), [](const Entry& e) { return e.sensor; });
  const bool replaced = waiting != queue_.rend();
  if (replaced) {
    queue_.erase(std::next(waiting).base());
    ++dropped_unreported_;
    ++dropped_total_;
  }
  queue_.push_back(Entry{std::move(message), true});
  return replaced;
}

bool OutputQueue::push(SharedBuffer message) {
  if (queue_.size() >= limit_) return false;
  queue_.push_back(Entry{std::move(message), false});
  return true;
}

std::vector<SharedBuffer> OutputQueue::take(std::size_t most) {
  std::vector<SharedBuffer> taken;
  const std::size_t count = std::min(most, queue_.size());
  taken.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    taken.push_back(std::move(queue_.front().message));
    queue_.pop_front();
  }
  return taken;
}

std::uint64_t OutputQueue::take_dropped() noexcept {
  return std::exchange(dropped_unreported_, 0);
}

}  // namespace flockbridge::bridge
