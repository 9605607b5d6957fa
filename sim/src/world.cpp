#include "flockbridge/sim/world.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace flockbridge::sim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

/// Where a ray from (x, y) along (dx, dy) enters the rectangle, or kNever.
double entry(const Rect& r, double x, double y, double dx, double dy) {
  double near = -kNever;
  double far = kNever;
  const auto slab = [&](double origin, double direction, double low, double high) {
    if (std::abs(direction) < 1e-12) return origin >= low && origin <= high;
    double t0 = (low - origin) / direction;
    double t1 = (high - origin) / direction;
    if (t0 > t1) std::swap(t0, t1);
    near = std::max(near, t0);
    far = std::min(far, t1);
    return near <= far;
  };
  if (!slab(x, dx, r.x0, r.x1) || !slab(y, dy, r.y0, r.y1) || far < 0) return kNever;
  return std::max(near, 0.0);
}

/// The point of the rectangle nearest (x, y).
void nearest_point(const Rect& r, double x, double y, double& px, double& py) {
  px = std::clamp(x, r.x0, r.x1);
  py = std::clamp(y, r.y0, r.y1);
}

}  // namespace

World World::classroom() {
  return World(Rect{-2000, -1500, 2000, 1500}, {Rect{-1400, 500, -1000, 900}});
}

double ir_reading(double seen_mm, const protocol::InverseRange& law, std::mt19937& random, double most) {
  std::normal_distribution<double> noise(0.0, seen_mm * 0.01);
  const double mm = std::max(seen_mm + noise(random), 1.0);
  return std::clamp(law.raw(mm), 0.0, most);
}

double World::sensor_ray(double x, double y, double heading_rad, double mount_x, double mount_y,
                         double mount_deg) const noexcept {
  const double c = std::cos(heading_rad);
  const double s = std::sin(heading_rad);
  return ray(x + mount_x * c - mount_y * s, y + mount_x * s + mount_y * c,
             heading_rad + mount_deg * std::numbers::pi / 180);
}

double World::ray(double x, double y, double heading_rad) const noexcept {
  const double dx = std::cos(heading_rad);
  const double dy = std::sin(heading_rad);
  double nearest = kNever;
  if (dx > 1e-12) nearest = std::min(nearest, (room_.x1 - x) / dx);
  if (dx < -1e-12) nearest = std::min(nearest, (room_.x0 - x) / dx);
  if (dy > 1e-12) nearest = std::min(nearest, (room_.y1 - y) / dy);
  if (dy < -1e-12) nearest = std::min(nearest, (room_.y0 - y) / dy);
  for (const Rect& box : boxes_) nearest = std::min(nearest, entry(box, x, y, dx, dy));
  return std::max(nearest, 0.0);
}

bool World::collides(double x, double y, double radius) const noexcept {
  return contact(x, y, radius).has_value();
}

double World::free_share(double x, double y, double dx, double dy, double radius) const noexcept {
  if (!collides(x + dx, y + dy, radius)) return 1;
  if (collides(x, y, radius)) return 0;
  double free = 0;
  double blocked = 1;
  const double length = std::hypot(dx, dy);
  while ((blocked - free) * length > 0.1) {
    const double middle = (free + blocked) / 2;
    (collides(x + middle * dx, y + middle * dy, radius) ? blocked : free) = middle;
  }
  return free;
}

std::optional<double> World::contact(double x, double y, double radius) const noexcept {
  double best = radius;
  std::optional<double> bearing;
  const auto consider = [&](double px, double py) {
    const double d = std::hypot(px - x, py - y);
    if (d <= best) {
      best = d;
      bearing = std::atan2(py - y, px - x);
    }
  };
  consider(room_.x1, y);
  consider(room_.x0, y);
  consider(x, room_.y1);
  consider(x, room_.y0);
  for (const Rect& box : boxes_) {
    double px = 0;
    double py = 0;
    nearest_point(box, x, y, px, py);
    consider(px, py);
  }
  return bearing;
}

}  // namespace flockbridge::sim
