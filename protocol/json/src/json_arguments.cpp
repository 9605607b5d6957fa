#include "flockbridge/protocol/json_arguments.hpp"

#include <cmath>
#include <cstdio>
#include <span>
#include <string>

#include "flockbridge/protocol/json_codec.hpp"

namespace flockbridge::protocol::json_arguments {
namespace {

/// A number as a person writes it: 250, -1.5, 1e+30.
std::string written(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

protocol::Error argument_error(std::string_view cmd, std::string_view problem) {
  return protocol::Error{std::string(cmd) + ": " + std::string(problem)};
}

protocol::Result<double> number(std::string_view cmd, const nlohmann::json& object, const char* name, double low,
                                double high) {
  const auto it = object.find(name);
  if (it == object.end()) return argument_error(cmd, std::string("needs '") + name + "'");
  if (!it->is_number()) return argument_error(cmd, std::string(name) + " must be a number");
  const double value = it->get<double>();
  if (!std::isfinite(value) || value < low || value > high) {
    return argument_error(
        cmd, std::string(name) + " must be from " + written(low) + " to " + written(high) + ", got " + written(value));
  }
  return value;
}

protocol::Result<bool> on_off(std::string_view cmd, const nlohmann::json& object) {
  const auto it = object.find("on");
  if (it == object.end() || !it->is_boolean()) return argument_error(cmd, "needs 'on': true or false");
  return it->get<bool>();
}

protocol::Result<protocol::Done> only(std::string_view cmd, const nlohmann::json& object,
                                      std::initializer_list<std::string_view> allowed) {
  return protocol::json::only(cmd, object, std::span(allowed.begin(), allowed.size()));
}

protocol::Result<Drive> drive_arguments(std::string_view cmd, const nlohmann::json& object, double max_v,
                                        double max_w) {
  if (auto checked = only(cmd, object, {"v_mm_s", "w_deg_s"}); !checked) return checked.error();
  auto v = number(cmd, object, "v_mm_s", -max_v, max_v);
  if (!v) return v.error();
  auto w = object.contains("w_deg_s") ? number(cmd, object, "w_deg_s", -max_w, max_w) : protocol::Result<double>(0.0);
  if (!w) return w.error();
  return Drive{v.value(), w.value()};
}

protocol::Result<Wheels> wheel_arguments(std::string_view cmd, const nlohmann::json& object, double limit) {
  if (auto checked = only(cmd, object, {"left_mm_s", "right_mm_s"}); !checked) return checked.error();
  auto left = number(cmd, object, "left_mm_s", -limit, limit);
  if (!left) return left.error();
  auto right = number(cmd, object, "right_mm_s", -limit, limit);
  if (!right) return right.error();
  return Wheels{left.value(), right.value()};
}

double tenths(double value) {
  return std::round(value * 10.0) / 10.0;
}

}  // namespace flockbridge::protocol::json_arguments
