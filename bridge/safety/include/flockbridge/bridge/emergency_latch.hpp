// The emergency stop's latch: once a stop has gone to the robot, no motion
// command goes to it until the latch is cleared, and only by whom may.
//
// Conditions of the problem: a stop comes from two places, and each is
// cleared by its own people.
// - A local stop (a client of this robot: JSON, the dashboard, the family's
//   own emergency command on its port) is cleared by the teacher, or by a driver when
//   access.driver_clears_emergency allows or no teacher secret is set (so
//   that someone always can).
// - A fleet stop (the fleet's MQTT command topics, the class hub's stop
//   buttons) was meant by the teacher for the whole class: it is cleared by
//   the fleet (its clear topics, the hub's Clear buttons) or by this robot's
//   teacher, never by a driver or a viewer, also when no secret is set.
// Both can hold at once (a student stops their robot, then the teacher
// stops the class): each is cleared by its own people, and the robot drives
// again when neither holds. A role that can clear only one of two holds
// clears nothing, so that no button half-works.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "flockbridge/bridge/access.hpp"
#include "flockbridge/bridge/config.hpp"
#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::bridge {

/// Where a stop, or its clearing, came from.
enum class StopSource : std::uint8_t { Local, Fleet };

/// "local", "fleet".
[[nodiscard]] std::string_view stop_source_name(StopSource source) noexcept;

class EmergencyLatch {
 public:
  /// One stop that holds the robot, or one clearing.
  struct Hold {
    std::uint64_t client = 0;  ///< the client that sent it; 0: the fleet
    std::string by;            ///< its address, or "the fleet (teacher)"
    std::string reason;        ///< as the fleet's command gave it; empty for a client's
    double since = 0;          ///< Unix seconds
  };

  /// Who asks to clear it: a connection of the robot's, by its role, or the fleet.
  enum class Clearer : std::uint8_t { Viewer, Driver, Teacher, Fleet };
  [[nodiscard]] static Clearer clearer(Role role) noexcept;

  [[nodiscard]] bool latched() const noexcept { return local_.has_value() || fleet_.has_value(); }
  [[nodiscard]] const std::optional<Hold>& hold(StopSource source) const noexcept {
    return source == StopSource::Local ? local_ : fleet_;
  }
  /// The hold that messages name first: the fleet's when there is one.
  [[nodiscard]] const Hold* first_hold() const noexcept;
  /// The last clearing (nothing until one).
  [[nodiscard]] const std::optional<Hold>& last_cleared() const noexcept { return cleared_; }
  [[nodiscard]] StopSource last_cleared_by() const noexcept { return cleared_source_; }

  /// A stop has gone to the robot (or could not, and must hold when the
  /// link comes back): it holds from now, replacing an earlier stop of the
  /// same source. Returns whether the robot was free before.
  bool latch(StopSource source, Hold hold);

  /// What a clearing did.
  struct Cleared {
    bool local = false;  ///< the local stop was cleared
    bool fleet = false;  ///< the fleet's stop was cleared
    [[nodiscard]] bool any() const noexcept { return local || fleet; }
  };
  /// Clears what `who` may clear. Refused (`denied`, nothing changed) when
  /// `who` may not clear every hold there is; the fleet clears its own hold
  /// only, and is never refused (there may be nothing of its to clear).
  [[nodiscard]] protocol::Result<Cleared> clear(Clearer who, const AccessSettings& access, Hold by);

  /// Who may clear the whole latch now, as messages name them: "teacher"
  /// (only when a teacher secret is set), "driver", "fleet". Empty when free.
  [[nodiscard]] std::vector<std::string> may_clear(const AccessSettings& access) const;
  /// Who may clear a stop of `source`, whatever else holds.
  [[nodiscard]] static std::vector<std::string> may_clear(StopSource source, const AccessSettings& access);
  /// The same in words, for people: "the teacher or a driver".
  [[nodiscard]] std::string who_may_clear(const AccessSettings& access) const;

  /// The emergency_latch message every client gets at each change (json_codec.hpp).
  [[nodiscard]] std::string message(const AccessSettings& access) const;
  /// The latch for the fleet's status: who stopped the robot and who may clear it; null when free.
  [[nodiscard]] nlohmann::ordered_json summary(const AccessSettings& access) const;

 private:
  std::optional<Hold> local_;
  std::optional<Hold> fleet_;
  std::optional<Hold> cleared_;
  StopSource cleared_source_ = StopSource::Local;
};

}  // namespace flockbridge::bridge
