#include "flockbridge/bridge/output_queue.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace flockbridge::bridge {

bool OutputQueue::push_sensor(SharedBuffer message, bool replace) {
  const auto waiting =
      replace ? std::find_if(queue_.rbegin(), queue_.rend(), [](const Entry& e) { return e.sensor; }) : queue_.rend();
  const bool replaced = waiting != queue_.rend();
  // The replaced message's own unreported losses pass on to its successor,
  // with itself: the notice goes just before the message that follows the
  // gap, not before an older one still waiting (a burst's first).
  std::uint64_t dropped = 0;
  if (replaced) {
    dropped = waiting->dropped_before + 1;
    queue_.erase(std::next(waiting).base());
    ++dropped_total_;
  }
  queue_.push_back(Entry{std::move(message), true, dropped});
  return replaced;
}

bool OutputQueue::push(SharedBuffer message) {
  if (queue_.size() >= limit_) return false;
  queue_.push_back(Entry{std::move(message), false, 0});
  return true;
}

std::vector<SharedBuffer> OutputQueue::take(std::size_t most, const DroppedNotice& notice) {
  std::vector<SharedBuffer> taken;
  taken.reserve(std::min(most, queue_.size() + 1));
  take(most, taken, notice);
  return taken;
}

void OutputQueue::take(std::size_t most, std::vector<SharedBuffer>& into, const DroppedNotice& notice) {
  for (std::size_t taken = 0; taken < most && !queue_.empty(); ++taken) {
    Entry& next = queue_.front();
    if (next.dropped_before > 0 && notice) {
      into.push_back(notice(std::exchange(next.dropped_before, 0)));
      continue;  // the sensor message follows when there is room
    }
    into.push_back(std::move(next.message));
    queue_.pop_front();
  }
}

}  // namespace flockbridge::bridge
