// The close watch on whoever can keep the robot moving: the client holding
// the control lease and the client that last set the robot moving
// (docs/clients.md, "What stops the robot"). A classroom's network fails
// without a word (a laptop lid, a phone out of Wi-Fi range): no FIN, no RST,
// and the robot would drive on until a timeout of many seconds.
//
// Silence alone proves nothing: a live program may send nothing for minutes
// while its robot drives. What tells a dead network from a quiet program is
// an answer the bridge waits for and does not get. Every client is a TCP
// connection, and its peer's kernel answers for it: it acknowledges what
// the bridge sends (sensor messages flow to nearly every client), and
// answers the keepalive probes that the watch asks the kernel to send after
// a second of quiet both ways (the shortest the kernel allows). So a
// watched client's network is lost when the bridge has waited for an answer
// for a while (kAnswerWindow, longer than any round trip of a working
// classroom network) and has heard nothing at all from the client for
// nearly `lost_after` (the bound the watch keeps, checked every
// kWatchInterval).
//
// The rules only: the Bridge reads the transports' state, stops the robot
// and tells everyone; everyone else keeps the ordinary dead-peer timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flockbridge/protocol/clock.hpp"

namespace flockbridge::bridge {

/// What the kernel knows of a client's connection now.
struct PeerState {
  /// Since anything (data, an acknowledgement, a probe's answer) last came from the peer.
  std::chrono::milliseconds silent{0};
  /// Something the peer must answer is out: data not yet acknowledged, or a probe.
  bool awaiting = false;
};

class DriverWatch {
 public:
  /// How often the Bridge reads a watched client's state.
  static constexpr std::chrono::milliseconds kWatchInterval{50};
  /// How long an answer may take on a working network before it counts as missing.
  static constexpr std::chrono::milliseconds kAnswerWindow{250};
  /// The shortest bound the watch can keep (its answer window, and two readings).
  static constexpr std::chrono::milliseconds kShortest{400};

  /// The clients whose watch began or ended with a change of who drives.
  struct Changes {
    std::vector<std::uint64_t> started;
    std::vector<std::uint64_t> ended;
  };

  explicit DriverWatch(std::chrono::milliseconds lost_after) noexcept : lost_after_(lost_after) {}
  void set_lost_after(std::chrono::milliseconds lost_after) noexcept { lost_after_ = lost_after; }
  [[nodiscard]] std::chrono::milliseconds lost_after() const noexcept { return lost_after_; }

  /// Watches the lease's holder and the client that last set the robot
  /// moving (either may be none, or both the same), and no one else.
  [[nodiscard]] Changes watch(std::optional<std::uint64_t> holder, std::optional<std::uint64_t> mover);
  [[nodiscard]] bool watched(std::uint64_t client) const noexcept;
  [[nodiscard]] std::vector<std::uint64_t> clients() const;

  /// A watched client's connection as its kernel sees it at `now`: why its
  /// network counts as lost, once (then nothing, until it is watched anew).
  [[nodiscard]] std::optional<std::string> check(std::uint64_t client, const PeerState& peer,
                                                 protocol::SteadyTime now);

 private:
  struct Watched {
    std::uint64_t client = 0;
    std::optional<protocol::SteadyTime> awaiting_since;  ///< first reading of an answer owed, in the run so far
    bool lost = false;
  };
  [[nodiscard]] Watched* find(std::uint64_t client) noexcept;

  std::chrono::milliseconds lost_after_;
  std::vector<Watched> state_;  ///< the watched clients, the holder first
};

}  // namespace flockbridge::bridge
