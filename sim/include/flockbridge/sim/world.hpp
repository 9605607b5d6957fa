// The room every simulated robot drives in: 4 m by 3 m with a box in it, in
// millimetres, in the frame each robot's odometry starts in (the robot in the
// middle at 0, 0, facing +x, so the far wall is 2 m ahead). The models ask
// it where a ray meets a wall or the box (their range sensors), whether the
// robot's footprint touches one (it then stops against it) and where (its
// bumpers). Pure: no I/O, no clock.
#pragma once

#include <optional>
#include <random>
#include <vector>

#include "flockbridge/protocol/robot_model.hpp"

namespace flockbridge::sim {

/// An IR ranger's reading of a wall `seen_mm` away: the distance with the
/// spread of such a sensor (about 1% of it), read back through `law`, from 0
/// to `most`.
[[nodiscard]] double ir_reading(double seen_mm, const protocol::InverseRange& law, std::mt19937& random, double most);

/// An axis-aligned rectangle, mm.
struct Rect {
  double x0 = 0;
  double y0 = 0;
  double x1 = 0;
  double y1 = 0;
};

class World {
 public:
  /// The room the simulators share: walls at x = +-2000 and y = +-1500,
  /// and a 400 mm box behind and to the left of the robot's start.
  [[nodiscard]] static World classroom();

  World(Rect room, std::vector<Rect> boxes) : room_(room), boxes_(std::move(boxes)) {}

  [[nodiscard]] const Rect& room() const noexcept { return room_; }
  [[nodiscard]] const std::vector<Rect>& boxes() const noexcept { return boxes_; }

  /// How far a ray from (x, y) in direction `heading_rad` goes before it
  /// meets a wall or a box (0 from inside a box or outside the room).
  [[nodiscard]] double ray(double x, double y, double heading_rad) const noexcept;
  /// How far a range sensor on a robot at (x, y) facing `heading_rad` sees:
  /// the sensor sits `mount_x` ahead of and `mount_y` left of the robot's
  /// centre, its axis `mount_deg` from the robot's front.
  [[nodiscard]] double sensor_ray(double x, double y, double heading_rad, double mount_x, double mount_y,
                                  double mount_deg) const noexcept;
  /// Whether a round robot of `radius` at (x, y) overlaps a wall or a box.
  [[nodiscard]] bool collides(double x, double y, double radius) const noexcept;
  /// How much of a move by (dx, dy) a round robot at (x, y) can make before
  /// it touches a wall or a box (0 to 1, to within a tenth of a millimetre):
  /// a robot driving into a wall ends against it, not a step short.
  [[nodiscard]] double free_share(double x, double y, double dx, double dy, double radius) const noexcept;
  /// The direction (radians, the world's frame) from (x, y) to the nearest
  /// point of a wall or box within `radius`; nothing when none is that near.
  [[nodiscard]] std::optional<double> contact(double x, double y, double radius) const noexcept;

 private:
  Rect room_;
  std::vector<Rect> boxes_;
};

}  // namespace flockbridge::sim
