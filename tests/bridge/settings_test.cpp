// The configuration: the file, the command line over it, the messages a bad
// value gets, --print-config's output read back, the packaged default file,
// and what SIGHUP may change.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "flockbridge/bridge/cli.hpp"
#include "flockbridge/bridge/families.hpp"
#include "flockbridge/bridge/flockbot/settings.hpp"
#include "flockbridge/bridge/settings.hpp"
#include "support/temp_dir.hpp"

using namespace flockbridge::bridge;
using flockbridge::bridge::flockbot::settings_of;

namespace {

const SettingsTable& table() {
  return settings_table();
}

/// The built-in configuration: the first family's defaults.
Config defaults() {
  return table().defaults();
}

/// Every setting's value, as the file writes it, keyed by setting.
std::vector<std::string> values_of(const Config& config) {
  std::vector<std::string> values;
  for (const Setting& setting : table().rows())
    values.push_back(setting.key() + "=" + format_value(setting.get(config)));
  return values;
}

std::string error_of(std::string_view toml) {
  auto parsed = parse_config(table(), toml, "test.toml");
  REQUIRE_FALSE_MESSAGE(parsed.ok(), toml);
  return parsed.error().message;
}

/// A configuration file in a fresh temporary folder, removed with it.
struct TempFile {
  explicit TempFile(const std::string& text) : path((folder / "flockbridge.toml").string()) {
    std::ofstream(path) << text;
  }
  flockbridge::testing::TempDir folder;
  std::string path;
};

/// The command line `flockbridge args...`, parsed; `Expected` says which outcome the test expects.
template <typename Expected>
Expected command_line(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"flockbridge"};
  for (const auto& arg : args) argv.push_back(arg.c_str());
  auto parsed = parse_bridge_command_line(static_cast<int>(argv.size()), argv.data(), table());
  REQUIRE(std::holds_alternative<Expected>(parsed));
  return std::get<Expected>(parsed);
}

BridgeCommandLine parse(const std::vector<std::string>& args) {
  return command_line<BridgeCommandLine>(args);
}

int exit_code_of(const std::vector<std::string>& args) {
  return command_line<int>(args);
}

}  // namespace

TEST_CASE("a file sets every kind of value, in its sections") {
  auto parsed = parse_config(table(), R"(
[serial]
device = "/dev/ttyUSB0"
baud = 57600
[robot]
family = "flockbot"
[flockbot]
id = 7
left_wheel_stop = 1490
ip = "10.20.30.40"
[flockbot.link]
nak_window_ms = 25
command_ack = true
[flockbot.units]
battery_volts_per_count = 0.0147
odometer_mm_per_count = 2
[json]
bind = "127.0.0.1"
port = 3006
[http]
enabled = false
[log]
level = "warning"
stats_interval_s = 0
)",
                             "test.toml");
  REQUIRE_MESSAGE(parsed.ok(), parsed.error().message);
  const Config& c = parsed.value();
  CHECK(c.device == "/dev/ttyUSB0");
  CHECK(c.baud == 57600);
  CHECK(settings_of(c).link.nak_window == std::chrono::milliseconds{25});
  CHECK(settings_of(c).link.require_command_ack);
  CHECK(settings_of(c).robot.id == 7);
  CHECK(settings_of(c).robot.left_wheel_stop == 1490);
  CHECK(settings_of(c).robot_ip == "10.20.30.40");
  CHECK(settings_of(c).robot.ip3 == 30);
  CHECK(settings_of(c).robot.ip4 == 40);
  CHECK(settings_of(c).units.battery_volts_per_count == doctest::Approx(0.0147));
  CHECK(settings_of(c).units.odometer_mm_per_count == 2.0);  // an integer where a number is asked for
  CHECK(c.effective_json_bind() == "127.0.0.1");
  CHECK(c.effective_native_bind() == "0.0.0.0");
  CHECK(c.json_port == 3006);
  CHECK_FALSE(c.http);
  CHECK(c.log_level == LogLevel::Warning);
  CHECK(c.stats_interval.count() == 0);
  // What the file leaves out keeps its default.
  CHECK(c.native_port == defaults().native_port);
  CHECK(settings_of(c).link.nak_retries == settings_of(defaults()).link.nak_retries);
  CHECK(c.notices.empty());
}

TEST_CASE("the family's own port's old section name is read as before, with a warning") {
  auto parsed = parse_config(table(), "[binary]\nport = 4005\nbind = \"127.0.0.1\"\n", "old.toml");
  REQUIRE_MESSAGE(parsed.ok(), parsed.error().message);
  CHECK(parsed.value().native_port == 4005);
  CHECK(parsed.value().effective_native_bind() == "127.0.0.1");
  REQUIRE(parsed.value().notices.size() == 1);
  CHECK(parsed.value().notices[0] ==
        "old.toml uses the bridge's settings under their old names: binary.bind (now native.bind), binary.port (now "
        "native.port). They are read as before; `flockbridge --print-config` writes the new names.");
  // The option's old name is still taken.
  CHECK(parse({"--no-config", "--binary-bind", "127.0.0.2"}).config.native_bind == "127.0.0.2");
}

TEST_CASE("a file written before the bridge served other families is read as before, with one warning") {
  auto parsed = parse_config(table(),
                             "[link]\nnak_window_ms = 25\n[robot]\nid = 7\nip = \"10.20.30.40\"\n[units]\n"
                             "battery_volts_per_count = 0.0147\n",
                             "old.toml");
  REQUIRE_MESSAGE(parsed.ok(), parsed.error().message);
  const Config& c = parsed.value();
  CHECK(settings_of(c).link.nak_window == std::chrono::milliseconds{25});
  CHECK(settings_of(c).robot.id == 7);
  CHECK(settings_of(c).robot.ip4 == 40);
  CHECK(settings_of(c).units.battery_volts_per_count == doctest::Approx(0.0147));
  REQUIRE(c.notices.size() == 1);
  CHECK(c.notices[0] ==
        "old.toml uses the Flockbot's settings under their old names: link.nak_window_ms (now "
        "flockbot.link.nak_window_ms), robot.id (now flockbot.id), robot.ip (now flockbot.ip), "
        "units.battery_volts_per_count (now flockbot.units.battery_volts_per_count). They are read as before; "
        "`flockbridge --print-config` writes the new names.");
  // A mistake under an old name is still named, with what the section holds now.
  const auto wrong = parse_config(table(), "[link]\nnak_window = 3\n", "old.toml");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().message.find("unknown setting 'flockbot.link.nak_window'") != std::string::npos);
  // The printed file uses the new names, and reads back without a warning.
  const std::string printed = format_config(table(), c);
  CHECK(printed.find("[flockbot.link]\n") != std::string::npos);
  CHECK(printed.find("\n[link]") == std::string::npos);
  const auto again = parse_config(table(), printed, "printed.toml");
  REQUIRE(again.ok());
  CHECK(again.value().notices.empty());
  CHECK(settings_of(again.value()).robot.id == 7);
}

TEST_CASE("a bad value is refused with its place, the setting, the value and what is allowed") {
  struct Case {
    const char* what;
    const char* toml;
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {"out of range",
       "[serial]\nbaud = 5\n",
       {"test.toml:2: serial.baud = 5 is not allowed: it must be a whole number from 9600 to 2000000"}},
      {"wrong type", "[serial]\n\ndevice = 17\n", {"test.toml:3: serial.device = 17", "must be text in quotes"}},
      {"a fraction where a whole number is needed",
       "[flockbot.link]\nnak_retries = 1.5\n",
       {"flockbot.link.nak_retries = 1.5", "must be a whole number"}},
      {"a choice",
       "[log]\nlevel = \"loud\"\n",
       {"log.level = 'loud'", "one of \"debug\", \"info\", \"warning\" or \"error\""}},
      {"an address", "[listen]\nbind = \"localhost\"\n", {"listen.bind = 'localhost'", "IPv4 or IPv6 address"}},
      {"the robot's address", "[flockbot]\nip = \"10.1.2\"\n", {"flockbot.ip = '10.1.2'", "an IPv4 address"}},
      {"a negative factor",
       "[flockbot.units]\nir_volts_per_count = -1\n",
       {"flockbot.units.ir_volts_per_count = -1", "from 0.0"}},
      {"a misspelt setting",
       "[flockbot.link]\nnak_window = 3\n",
       {"test.toml:2: unknown setting 'flockbot.link.nak_window'", "nak_window_ms"}},
      {"an unknown section", "[logs]\nlevel = \"info\"\n", {"unknown section or setting 'logs'", "serial, robot"}},
      {"an unknown section inside a known one",
       "[flockbot.lnk]\nnak_retries = 1\n",
       {"unknown setting 'flockbot.lnk'", "the settings of [flockbot] are id, gripper"}},
      {"a setting outside any section", "baud = 9600\n", {"unknown section or setting 'baud'"}},
      {"two listeners on one port",
       "[binary]\nport = 4000\n[json]\nport = 4000\n",
       {"native.port and json.port are both 4000"}},
      {"reopen bounds reversed",
       "[serial]\nreopen_min_ms = 900\nreopen_max_ms = 100\n",
       {"serial.reopen_min_ms (900) must not be above serial.reopen_max_ms (100)"}},
      {"not TOML at all", "[serial\nbaud = 3\n", {"test.toml:1:", "not valid TOML"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const std::string message = error_of(c.toml);
    for (const auto& part : c.expected) CHECK_MESSAGE(message.find(part) != std::string::npos, message);
  }
}

TEST_CASE("every problem of a file is reported at once, in the file's order") {
  const std::string message = error_of("[serial]\nbaud = 5\n[log]\nlevel = \"x\"\n[link]\nnak_retries = 99\n");
  const auto baud = message.find("test.toml:2:");
  const auto level = message.find("test.toml:4:");
  const auto retries = message.find("test.toml:6:");
  REQUIRE(baud != std::string::npos);
  REQUIRE(level != std::string::npos);
  REQUIRE(retries != std::string::npos);
  CHECK(baud < level);
  CHECK(level < retries);
}

TEST_CASE("--print-config's output reads back as the same configuration") {
  TempFile file(
      "[robot]\nid = 9\nip = \"192.168.4.77\"\n[units]\nbattery_volts_per_count = 0.0147\n"
      "[http]\nroot = \"/srv/it's \\\"quoted\\\"\"\n");
  const Config original = parse({"--config", file.path, "--nak-window-ms", "40", "--simulate"}).config;
  auto again = parse_config(table(), format_config(table(), original), "printed");
  REQUIRE_MESSAGE(again.ok(), again.error().message);
  CHECK(values_of(again.value()) == values_of(original));
  CHECK(again.value().http_root == "/srv/it's \"quoted\"");
}

TEST_CASE("the packaged default file is every default, commented out, and reads as the defaults") {
  std::ifstream in(FLOCKBRIDGE_SOURCE_DIR "/deploy/flockbridge.toml");
  REQUIRE_MESSAGE(in, "deploy/flockbridge.toml is missing");
  std::ostringstream text;
  text << in.rdbuf();
  // Made by `flockbridge --print-default-config > deploy/flockbridge.toml`; a
  // setting added to the table must reach the file.
#ifndef FLOCKBRIDGE_TEST_FAMILY
  CHECK_MESSAGE(text.str() == format_config(table(), defaults(), true),
                "deploy/flockbridge.toml is out of date: run build/bin/flockbridge --print-default-config");
#else
  // The file's help names the families that ship; this build adds the
  // tests' own, so the text is compared by the builds without it.
  MESSAGE("deploy/flockbridge.toml's text is compared in builds without the tests' own family");
#endif
  // Uncommenting every value changes nothing.
  std::string uncommented;
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) {
    const bool commented_value =
        line.size() > 1 && line[0] == '#' && line[1] != ' ' && line.find(" = ") != std::string::npos;
    uncommented += (commented_value ? line.substr(1) : line) + "\n";
  }
  auto parsed = parse_config(table(), uncommented, "uncommented");
  REQUIRE_MESSAGE(parsed.ok(), parsed.error().message);
  CHECK(values_of(parsed.value()) == values_of(defaults()));
  std::size_t documented = 0;
  for (const Setting& setting : table().rows()) {
    if (uncommented.find("\n" + std::string(setting.name) + " = ") != std::string::npos) ++documented;
  }
  CHECK(documented == table().rows().size());
}

TEST_CASE("the configuration page's table lists every setting with its option") {
  std::ifstream in(FLOCKBRIDGE_SOURCE_DIR "/docs/configuration.md");
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  for (const Setting& setting : table().rows()) {
    CAPTURE(setting.key());
    CHECK(text.str().find("| `" + setting.key() + "` | `" + std::string(setting.option) + "` |") != std::string::npos);
  }
}

TEST_CASE("the command line overrides the file, and the last of an option wins") {
  TempFile file("[serial]\nbaud = 57600\ndevice = \"/dev/from-file\"\n[simulator]\nenabled = true\n");
  const auto command_line = parse({"--config", file.path, "--baud", "9600", "--baud", "19200", "--simulate=false"});
  CHECK(command_line.config.baud == 19200);
  CHECK(command_line.config.device == "/dev/from-file");
  CHECK_FALSE(command_line.config.simulate);
  CHECK(command_line.sources.file == file.path);
  CHECK(command_line.sources.file_required);
  // --no-http is the inverse of http.enabled.
  CHECK_FALSE(parse({"--no-config", "--no-http"}).config.http);
  CHECK(parse({"--no-config"}).config.http);
}

TEST_CASE("a bad option or file stops start-up with the configuration error status") {
  TempFile file("[serial]\nbaud = 5\n");
  CHECK(exit_code_of({"--config", file.path}) == kConfigErrorExit);
  CHECK(exit_code_of({"--no-config", "--baud", "fast"}) == kConfigErrorExit);
  CHECK(exit_code_of({"--no-config", "--robot-ip", "1.2.3"}) == kConfigErrorExit);
  CHECK(exit_code_of({"--config", (file.folder / "missing.toml").string()}) == kConfigErrorExit);
}

TEST_CASE("the default file may be missing, a file named on the command line may not") {
  TempFile file("");
  ConfigSources sources;
  sources.file = (file.folder / "missing.toml").string();
  sources.file_required = false;
  auto loaded = load_config(table(), sources);
  REQUIRE(loaded.ok());
  CHECK(values_of(loaded.value()) == values_of(defaults()));
  sources.file_required = true;
  auto refused = load_config(table(), sources);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("cannot read the configuration file") != std::string::npos);
}

TEST_CASE("a reload applies what may change at once and holds back what needs a restart") {
  Config running = defaults();
  Config loaded = running;
  loaded.log_level = LogLevel::Debug;
  settings_of(loaded).units.battery_volts_per_count = 0.01;
  settings_of(loaded).robot.id = 42;
  loaded.native_port = 4005;
  loaded.device = "/dev/ttyUSB7";
  const Reload plan = plan_reload(table(), running, loaded);
  CHECK(plan.config.log_level == LogLevel::Debug);
  CHECK(settings_of(plan.config).units.battery_volts_per_count == 0.01);
  CHECK(settings_of(plan.config).robot.id == 42);
  CHECK(plan.config.native_port == running.native_port);
  CHECK(plan.config.device == running.device);
  CHECK(plan.applied == std::vector<std::string>{"log.level: 'info' -> 'debug'", "flockbot.id: 1 -> 42",
                                                 "flockbot.units.battery_volts_per_count: 0.0 -> 0.01"});
  CHECK(plan.deferred ==
        std::vector<std::string>{"serial.device: '/dev/flockbot' -> '/dev/ttyUSB7'", "native.port: 2005 -> 4005"});
}

TEST_CASE("secrets come from a file only its owner and group may read, and are never shown") {
  TempFile file("[access]\ndriver_pin = \"4711\"\nteacher_secret = \"chalk-and-cheese\"\n");
  ConfigSources sources;
  sources.file = file.path;
  sources.file_required = true;
  namespace fs = std::filesystem;
  fs::permissions(file.path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  auto loaded = load_config(table(), sources);
  REQUIRE(loaded.ok());
  CHECK(loaded.value().access.driver_pin == "4711");
  CHECK(loaded.value().access.teacher_secret == "chalk-and-cheese");
  // --print-config and the reload's log show that they are set, never what they are.
  const std::string printed = format_config(table(), loaded.value());
  CHECK(printed.find("driver_pin = '***'") != std::string::npos);
  CHECK(printed.find("4711") == std::string::npos);
  CHECK(printed.find("chalk") == std::string::npos);
  const Reload plan = plan_reload(table(), defaults(), loaded.value());
  for (const std::string& line : plan.applied) CHECK(line.find("4711") == std::string::npos);
  CHECK(std::find(plan.applied.begin(), plan.applied.end(), "access.driver_pin: changed") != plan.applied.end());
  // Readable by every user of the machine: refused, naming the file, the secrets and the remedy.
  fs::permissions(file.path, fs::perms::others_read, fs::perm_options::add);
  auto exposed = load_config(table(), sources);
  REQUIRE_FALSE(exposed.ok());
  CHECK(exposed.error().message.find(file.path +
                                     " holds access.driver_pin and access.teacher_secret but every user "
                                     "of this machine may read it (mode 644); make it readable by its owner and group "
                                     "only: chmod 640 " +
                                     file.path) == 0);
  // No secret, no objection.
  TempFile plain("[access]\nlease_idle_ms = 5000\n");
  fs::permissions(plain.path, fs::perms::others_read, fs::perm_options::add);
  sources.file = plain.path;
  CHECK(load_config(table(), sources).ok());
  // Secrets have no command-line option, and must be printable.
  CHECK(exit_code_of({"--no-config", "--driver-pin", "1"}) != 0);
  CHECK(error_of("[access]\ndriver_pin = \"12 34\"\n").find("printable ASCII characters without spaces") !=
        std::string::npos);
}

TEST_CASE("a live setting changed by name is checked as the file's values are, and secrets and restarts are refused") {
  const Config running = defaults();
  auto changed = with_setting(table(), running, "access.lease_idle_ms", "2000");
  REQUIRE(changed);
  CHECK(changed.value().access.lease_idle == std::chrono::milliseconds(2000));
  changed = with_setting(table(), running, "access.native_port_mode", "paired");
  REQUIRE(changed);
  CHECK(changed.value().access.native_port_mode == NativePortMode::Paired);
  CHECK(
      with_setting(table(), running, "access.driver_clears_emergency", "true").value().access.driver_clears_emergency);

  CHECK(with_setting(table(), running, "access.lease_idle_ms", "5").error().message ==
        "access.lease_idle_ms = 5 is not allowed: it must be a whole number from 100 to 3600000");
  CHECK(with_setting(table(), running, "access.native_port_mode", "closed").error().message.find("is not allowed") !=
        std::string::npos);
  CHECK(with_setting(table(), running, "access.driver_pin", "1234").error().message ==
        "access.driver_pin is a secret: only the configuration file sets it");
  CHECK(with_setting(table(), running, "serial.baud", "57600").error().message ==
        "serial.baud needs a restart: set it in the configuration file and restart the bridge");
  CHECK(with_setting(table(), running, "serial.nonsense", "1").error().message ==
        "no setting is called serial.nonsense");
}
