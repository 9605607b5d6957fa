// What waits to be written to one client. Messages are shared buffers: a
// sensor packet is encoded once per format and every subscriber's queue holds
// a reference to the same bytes.
//
// Sensor messages never pile up for a client that is behind: a new one
// replaces the one still waiting (latest wins) and the replaced one is
// counted as dropped, so a slow reader costs the bridge one message, not a
// backlog. (The packets of one serial read are queued together and go out
// in one write; those are not dropped.) Every other message (replies,
// errors, link changes, the robot's other packets) is kept, up to a limit; a client
// that lets them exceed it is too far behind to serve.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace flockbridge::bridge {

using SharedBuffer = std::shared_ptr<const std::string>;

[[nodiscard]] inline SharedBuffer make_buffer(std::string bytes) {
  return std::make_shared<const std::string>(std::move(bytes));
}

class OutputQueue {
 public:
  explicit OutputQueue(std::size_t limit) : limit_(limit) {}

  /// Queues a sensor message, replacing one still waiting when `replace`
  /// (a client that is behind), appending it otherwise (a burst of packets
  /// that goes out in one write). Returns true when it replaced (dropped) one.
  bool push_sensor(SharedBuffer message, bool replace = true);
  /// Queues any other message. Returns false (and queues nothing) when the
  /// limit is reached.
  [[nodiscard]] bool push(SharedBuffer message);

  /// Makes the message that tells a client how many sensor messages it lost.
  using DroppedNotice = std::function<SharedBuffer(std::uint64_t count)>;
  /// Takes up to `most` messages, oldest first. When sensor messages were
  /// dropped, the notice of how many goes just before the sensor message
  /// that replaced them (so after everything queued earlier: the hello
  /// stays first, and so do the sensor messages of a burst that came before
  /// the gap), and counts as one of the `most`.
  [[nodiscard]] std::vector<SharedBuffer> take(std::size_t most, const DroppedNotice& notice = {});
  /// The same, appended to `into` (a vector kept from one write to the next
  /// allocates nothing).
  void take(std::size_t most, std::vector<SharedBuffer>& into, const DroppedNotice& notice = {});

  [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
  [[nodiscard]] bool empty() const noexcept { return queue_.empty(); }
  [[nodiscard]] std::uint64_t dropped_total() const noexcept { return dropped_total_; }

 private:
  struct Entry {
    SharedBuffer message;
    bool sensor;
    std::uint64_t dropped_before;  ///< sensor messages lost just before this one, not yet told
  };
  std::size_t limit_;
  std::deque<Entry> queue_;
  std::uint64_t dropped_total_ = 0;
};

}  // namespace flockbridge::bridge
