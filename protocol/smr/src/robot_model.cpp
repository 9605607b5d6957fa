#include "flockbridge/protocol/smr/robot_model.hpp"

#include <cmath>
#include <numbers>

namespace flockbridge::protocol::smr {

RobotGeometry robot_geometry(const Geometry& wheels, const InverseRange& ir) {
  RobotGeometry g;
  g.radius_mm = kRadiusMm;
  g.wheel_base_mm = wheels.wheel_base_m * 1000;
  // The motors' top speed: 127 positions a period.
  const double top = wheels.wheel_speed(127) * 1000;
  g.max_v_mm_s = std::round(top);
  g.max_w_deg_s = std::round(2 * top / g.wheel_base_mm.value() * 180 / std::numbers::pi);
  for (const IrMount& mount : kIrMounts) {
    g.ranges.push_back(RangeSensor{.name = mount.name,
                                   .kind = RangeKind::Ir,
                                   .deg = mount.deg,
                                   .x_mm = mount.x_mm,
                                   .y_mm = mount.y_mm,
                                   .max_mm = ir.known() ? std::optional<double>(ir.max_mm) : std::nullopt});
  }
  return g;
}

}  // namespace flockbridge::protocol::smr
