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

std::vector<SharedBuffer> OutputQueue::take(std::size_t most, const DroppedNotice& notice) {
  std::vector<SharedBuffer> taken;
  taken.reserve(std::min(most, queue_.size() + 1));
  while (taken.size() < most && !queue_.empty()) {
    Entry& next = queue_.front();
    if (next.sensor && dropped_unreported_ > 0 && notice) {
      taken.push_back(notice(std::exchange(dropped_unreported_, 0)));
      continue;  // the sensor message follows when there is room
    }
    taken.push_back(std::move(next.message));
    queue_.pop_front();
  }
  return taken;
}

}  // namespace flockbridge::bridge
