// The close watch on the driver (driver_watch.hpp), without a loop or a
// socket: who is watched, and which readings of a connection count as a
// lost network. A quiet program whose host answers is never lost; one that
// owes an answer and has been silent for the bound is, once.
#include <doctest/doctest.h>

#include <chrono>

#include "flockbridge/bridge/driver_watch.hpp"

using namespace flockbridge::bridge;
using namespace std::chrono_literals;

namespace {

const flockbridge::protocol::SteadyTime kWatchStart{std::chrono::seconds{1000}};

/// Readings every kWatchInterval from `from` to `to` (ms after kWatchStart) of a
/// connection whose state `at(ms)` gives; the first reading that found it
/// lost (ms), or -1.
template <typename State>
long first_lost(DriverWatch& watch, std::uint64_t client, long from, long to, State at) {
  for (long ms = from; ms <= to; ms += DriverWatch::kWatchInterval.count()) {
    if (watch.check(client, at(ms), kWatchStart + std::chrono::milliseconds{ms})) return ms;
  }
  return -1;
}

}  // namespace

TEST_CASE("the lease's holder and the last to set the robot moving are watched, and no one else") {
  DriverWatch watch(1000ms);
  auto changes = watch.watch(4, 4);
  CHECK(changes.started == std::vector<std::uint64_t>{4});
  CHECK(changes.ended.empty());
  CHECK(watch.watched(4));
  changes = watch.watch(4, 7);
  CHECK(changes.started == std::vector<std::uint64_t>{7});
  CHECK(watch.clients() == std::vector<std::uint64_t>{4, 7});
  changes = watch.watch(std::nullopt, std::nullopt);
  CHECK(changes.ended == std::vector<std::uint64_t>{4, 7});
  CHECK_FALSE(watch.watched(4));
  // A client nobody watches is never lost, whatever its connection says.
  CHECK_FALSE(watch.check(4, PeerState{10s, true}, kWatchStart));
}

TEST_CASE("a network that vanishes while data flows is lost within the bound") {
  // Sensor messages go out every 20 ms; the peer acknowledged the last one
  // heard at 500 ms, then its network went: from then on data is owed and
  // the silence grows.
  DriverWatch watch(1000ms);
  (void)watch.watch(1, 1);
  const auto state = [](long ms) {
    return ms < 500 ? PeerState{std::chrono::milliseconds{ms % 20}, ms % 40 == 0}
                    : PeerState{std::chrono::milliseconds{ms - 500}, true};
  };
  const long lost = first_lost(watch, 1, 0, 5000, state);
  CHECK(lost > 500);
  CHECK(lost - 500 <= 1000);
  // Once: the Bridge has stopped the robot.
  CHECK_FALSE(watch.check(1, PeerState{10s, true}, kWatchStart + 10s));
}

TEST_CASE("a quiet connection whose host answers the keepalive probes is never lost") {
  // Nothing flows either way; the kernel probes after a second of quiet,
  // and the answer comes 40 ms later (a slow classroom Wi-Fi), for ten minutes.
  DriverWatch watch(1000ms);
  (void)watch.watch(2, std::nullopt);
  const auto state = [](long ms) {
    const long in_cycle = ms % 1040;
    return in_cycle < 1000 ? PeerState{std::chrono::milliseconds{in_cycle}, false}
                           : PeerState{std::chrono::milliseconds{in_cycle}, true};
  };
  CHECK(first_lost(watch, 2, 0, 600'000, state) == -1);
}

TEST_CASE("an answer slower than the window on a silent connection, or a long silence owing nothing, is not lost") {
  DriverWatch watch(1000ms);
  (void)watch.watch(3, 3);
  // Owed for 200 ms of the window, then answered, over and over.
  CHECK(first_lost(watch, 3, 0, 60'000, [](long ms) {
          const long in_cycle = ms % 1200;
          return PeerState{std::chrono::milliseconds{in_cycle}, in_cycle >= 1000};
        }) == -1);
  // Minutes of silence with nothing owed (a kernel that has not probed yet).
  CHECK(first_lost(watch, 3, 0, 120'000, [](long ms) { return PeerState{std::chrono::milliseconds{ms}, false}; }) ==
        -1);
}

TEST_CASE("a quiet connection whose network vanished is lost once its probe goes unanswered") {
  DriverWatch watch(1000ms);
  (void)watch.watch(5, 5);
  // Heard last at 0; the probe goes out at 1000 ms and is never answered.
  const long lost = first_lost(watch, 5, 0, 10'000, [](long ms) {
    return PeerState{std::chrono::milliseconds{ms}, ms >= 1000};
  });
  CHECK(lost >= 1000 + DriverWatch::kAnswerWindow.count());
  CHECK(lost <= 1000 + DriverWatch::kAnswerWindow.count() + DriverWatch::kWatchInterval.count());
}

TEST_CASE("a client watched anew is watched afresh, and the bound follows the setting") {
  DriverWatch watch(2000ms);
  (void)watch.watch(6, 6);
  const auto vanished = [](long ms) { return PeerState{std::chrono::milliseconds{ms}, true}; };
  const long lost = first_lost(watch, 6, 0, 10'000, vanished);
  CHECK(lost <= 2000);
  CHECK(lost >= 2000 - 2 * DriverWatch::kWatchInterval.count());
  (void)watch.watch(std::nullopt, std::nullopt);
  (void)watch.watch(6, std::nullopt);
  watch.set_lost_after(1000ms);
  CHECK(first_lost(watch, 6, 0, 10'000, vanished) <= 1000);
}
