#include "flockbridge/bridge/families.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <memory>
#include <string_view>
#include <utility>
#include <string>
#include <vector>

#include "flockbridge/bridge/flockbot/driver.hpp"
#include "flockbridge/bridge/flockbot/settings.hpp"
#include "flockbridge/bridge/none/driver.hpp"
#include "flockbridge/bridge/pioneer/driver.hpp"
#include "flockbridge/bridge/replay/driver.hpp"
#include "flockbridge/bridge/smr/driver.hpp"
#include "flockbridge/bridge/smr/settings.hpp"
#include "flockbridge/bridge/suggest.hpp"

namespace flockbridge::bridge {
namespace {

template <typename Driver>
std::unique_ptr<RobotDriver> make(uv_loop_t* loop, const Config& config, RobotDriver::Host& host) {
  return std::make_unique<Driver>(loop, config, host);
}

// The first row is the family of a configuration that names none.
constexpr std::array kFamilies{
    RobotFamily{"flockbot", "Flockbot (an Arduino Uno on USB serial)", 2005, 115200, "/dev/flockbot",
                flockbot::kDeviceHint, &make<flockbot::FlockbotDriver>, &flockbot::settings_rows, nullptr,
                &flockbot::native_replay},
    RobotFamily{"pioneer", "Pioneer 2/3 and AmigoBot (AROS, on the robot's HOST serial port)", 8101, 9600,
                "/dev/ttyUSB0", pioneer::kDeviceHint, &make<pioneer::PioneerDriver>, nullptr, &pioneer::model_names,
                nullptr},
    RobotFamily{"smr", "DTU Small Mobile Robot (SMRD's RS485 bus, on a serial adapter)", 24901, 115200, "/dev/ttyS0",
                smr::kDeviceHint, &make<smr::SmrDriver>, &smr::settings_rows, nullptr, &smr::native_replay},
    RobotFamily{"none", "no robot: a bridge that only serves the fleet (the class hub, --hub)", 0, 115200, "", "",
                &make<none::NoRobotDriver>, nullptr, nullptr, nullptr},
};

/// The core's rows' words about the families.
FamiliesHelp families_help() {
  FamiliesHelp help;
  help.family = "The robot family behind the bridge: ";
  help.model = "The family's model (";
  help.device =
      "Serial device of the robot, or tcp:HOST:PORT for one reached over the network (a Wi-Fi serial bridge, "
      "MobileSim). Each family's default: ";
  // The lists' separators, before every item but the first.
  std::string_view family_separator;
  std::string_view model_separator;
  std::string_view device_separator;
  std::string_view note_separator;
  std::string notes;  // where each family's device is found
  for (const RobotFamily& family : kFamilies) {
    help.family += std::string(std::exchange(family_separator, "; ")) + std::string(family.name) + ": " +
                   std::string(family.robots);
    if (family.models != nullptr) {
      help.model +=
          std::string(std::exchange(model_separator, "; ")) + std::string(family.name) + ": " + family.models();
    }
    if (!family.default_device.empty()) {
      help.device += std::string(std::exchange(device_separator, ", ")) + std::string(family.name) + " " +
                     std::string(family.default_device);
    }
    if (!family.device_note.empty()) {
      notes += std::string(std::exchange(note_separator, "; ")) + std::string(family.device_note);
    }
  }
  help.family += ". It sets the defaults of serial.device, serial.baud and native.port.";
  help.model += "); \"\": the model the robot names when it connects.";
  help.device += notes.empty() ? "." : ". Where each is found: " + notes + ".";
  return help;
}

}  // namespace

namespace {

/// A replay of a recording of the configured family (the command line made it the recording's).
std::unique_ptr<RobotDriver> make_replay(uv_loop_t* loop, const Config& config, RobotDriver::Host& host) {
  const RobotFamily* family = find_robot_family(config.family);
  return std::make_unique<replay::ReplayDriver>(
      loop, config, host,
      family != nullptr && family->native_replay != nullptr ? family->native_replay(config) : nullptr);
}

}  // namespace

DriverFactory driver_factory(const Config& config) noexcept {
  if (!config.replay.file.empty()) return &make_replay;
  const RobotFamily* family = find_robot_family(config.family);
  return family != nullptr ? family->make_driver : kFamilies.front().make_driver;
}

std::span<const RobotFamily> robot_families() noexcept {
  return kFamilies;
}

std::string robot_family_list() {
  std::string list;
  for (const RobotFamily& family : kFamilies) {
    if (family.native_port != 0) list.append(family.name).push_back('\n');
  }
  return list;
}

const RobotFamily* find_robot_family(std::string_view name) noexcept {
  const auto found =
      std::find_if(kFamilies.begin(), kFamilies.end(), [&](const RobotFamily& family) { return family.name == name; });
  return found == kFamilies.end() ? nullptr : &*found;
}

protocol::Result<Config> family_defaults(const std::string& name) {
  const RobotFamily* family = find_robot_family(name);
  if (family == nullptr) {
    std::string known;
    std::vector<std::string_view> names;
    for (const RobotFamily& row : kFamilies) {
      known += (known.empty() ? "" : ", ") + std::string(row.name);
      names.push_back(row.name);
    }
    return protocol::Error{"robot.family: there is no robot family '" + name + "'" + did_you_mean(name, names) +
                           "; the families are " + known};
  }
  Config config;
  config.family = family->name;
  config.device = family->default_device;
  config.baud = family->default_baud;
  config.native_port = family->native_port;
  return config;
}

const SettingsTable& settings_table() {
  static const FamiliesHelp help = families_help();
  static const SettingsTable table = [] {
    CoreRows core = core_settings(help);
    std::vector<Setting> rows = std::move(core.before);
    std::vector<Renamed> renamed = std::move(core.renamed);
    for (const RobotFamily& family : kFamilies) {
      if (family.settings == nullptr) continue;
      FamilyRows own = family.settings();
      std::move(own.rows.begin(), own.rows.end(), std::back_inserter(rows));
      renamed.insert(renamed.end(), own.renamed.begin(), own.renamed.end());
    }
    std::move(core.after.begin(), core.after.end(), std::back_inserter(rows));
    return SettingsTable(std::move(rows), std::move(renamed), &family_defaults, std::string(kFamilies.front().name));
  }();
  return table;
}

}  // namespace flockbridge::bridge
