// Which robot is on a serial device (serial_prober.hpp): each family's
// simulated robot, on the pseudo-terminal its simulator program makes, is
// recognised as its family, with the speed it answered at and how long it
// took; a device that sends noise and one that echoes what it gets are left
// alone, each family saying why. The families are the table's, every one.
#include <doctest/doctest.h>

#include <uv.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "flockbridge/bridge/device_watch.hpp"
#include "flockbridge/bridge/families.hpp"
#include "flockbridge/bridge/serial_candidates.hpp"
#include "flockbridge/bridge/serial_prober.hpp"
#include "support/process.hpp"
#include "support/pty_pair.hpp"
#include "support/run_until.hpp"
#include "support/temp_dir.hpp"

using namespace flockbridge;
using namespace std::chrono_literals;

namespace {

/// Probes `device` on a loop of its own and returns what was found;
/// `usb`: the identity the device is taken to have (none: not on USB).
std::optional<bridge::SerialProber::Outcome> probe(const std::string& device,
                                                   std::optional<protocol::UsbIdentity> usb = std::nullopt) {
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  std::optional<bridge::SerialProber::Outcome> outcome;
  {
    bridge::SerialProber prober(
        &loop, bridge::make_probes(bridge::robot_families()), [&](const auto& found) { outcome = found; },
        [usb](const std::string& /*device*/) { return usb; });
    REQUIRE(prober.start(device));
    CHECK(testing::run_until(
        &loop, [&] { return outcome.has_value(); }, 20s));
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
  return outcome;
}

/// A device played on a pseudo-terminal's master end by a thread: noise, or an echo.
class PlayedDevice {
 public:
  enum class Kind { Noise, Echo };
  explicit PlayedDevice(Kind kind) : player_([this, kind] { play(kind); }) {}
  PlayedDevice(const PlayedDevice&) = delete;
  PlayedDevice& operator=(const PlayedDevice&) = delete;
  ~PlayedDevice() {
    stop_ = true;
    player_.join();
  }
  [[nodiscard]] const std::string& path() const { return pty_.slave; }

 private:
  void play(Kind kind) {
    std::mt19937 random(5);
    std::array<unsigned char, 256> buffer{};
    while (!stop_) {
      if (kind == Kind::Noise) {
        for (auto& byte : buffer) byte = static_cast<unsigned char>(random());
        (void)::write(pty_.master, buffer.data(), 64);
      } else if (const ssize_t n = ::read(pty_.master, buffer.data(), buffer.size()); n > 0) {
        (void)::write(pty_.master, buffer.data(), static_cast<std::size_t>(n));
      }
      std::this_thread::sleep_for(2ms);
    }
  }

  testing::PtyPair pty_;
  std::atomic<bool> stop_{false};
  std::thread player_;
};

}  // namespace

TEST_CASE("serial prober: each family's simulated robot is recognised as its family, and no other family claims it") {
  testing::TempDir directory;
  for (const bridge::RobotFamily* family : bridge::robot_families()) {
    if (!family->has_robot) continue;
    const std::string name(family->name);
    CAPTURE(name);
    const std::string link = (directory.path() / name).string();
    testing::ChildProcess robot({FLOCKBRIDGE_SIM_BIN, "--robot", name, "--link", link});
    REQUIRE(robot.wait_for(testing::ChildProcess::Stream::Stdout, "ready "));
    const auto outcome = probe(link);
    REQUIRE(outcome);
    if (family->make_probe == nullptr) {
      // A family that cannot be recognised yet: at least no other claims its robot.
      CHECK(outcome->family.empty());
      continue;
    }
    CHECK(outcome->family == name);
    CHECK(outcome->baud > 0);
    CHECK_FALSE(outcome->finding.evidence.empty());
    MESSAGE(name << ": " << outcome->finding.evidence << " in " << outcome->took.count() << " ms");
  }
}

TEST_CASE("serial prober: a device that sends noise and one that echoes are left alone, each family saying why") {
  for (const auto kind : {PlayedDevice::Kind::Noise, PlayedDevice::Kind::Echo}) {
    PlayedDevice device(kind);
    const auto outcome = probe(device.path());
    REQUIRE(outcome);
    CHECK(outcome->family.empty());
    MESSAGE(std::string(kind == PlayedDevice::Kind::Noise ? "noise: " : "echo: ") << outcome->why_not);
    for (const bridge::RobotFamily* family : bridge::robot_families()) {
      if (family->make_probe != nullptr)
        CHECK(outcome->why_not.find(std::string(family->name) + " at ") != std::string::npos);
    }
  }
}

TEST_CASE(
    "serial prober: on a USB adapter no Uno uses, the Flockbot is not listened for, and a Pioneer is found at once") {
  testing::TempDir directory;
  const std::string link = (directory.path() / "pioneer").string();
  testing::ChildProcess robot({FLOCKBRIDGE_SIM_BIN, "--robot", "pioneer", "--link", link});
  REQUIRE(robot.wait_for(testing::ChildProcess::Stream::Stdout, "ready "));
  const auto on_ftdi = probe(link, protocol::UsbIdentity{0x0403, 0x6001});
  REQUIRE(on_ftdi);
  CHECK(on_ftdi->family == "pioneer");
  CHECK(on_ftdi->took < 2500ms);  // no 2.5 s of listening for an Uno's boot first
  MESSAGE("a Pioneer on an FTDI adapter: " << on_ftdi->took.count() << " ms");
  const auto on_uno = probe(link, protocol::UsbIdentity{0x2341, 0x0043});
  REQUIRE(on_uno);
  CHECK(on_uno->family == "pioneer");
  CHECK(on_uno->took >= 2500ms);  // an Uno's board: listened to first, in case it is booting
}

TEST_CASE(
    "serial prober: a device's USB identity is read from sysfs, through a by-id name, and a pseudo-terminal has none") {
  namespace fs = std::filesystem;
  testing::TempDir directory;
  const fs::path sys = directory.path() / "sys";
  // A USB adapter's tree as the kernel lays it out: the USB device, its
  // interface, and the tty under it; /sys/class/tty/ttyUSB0/device points
  // at the interface.
  const fs::path usb = sys / "devices" / "platform" / "usb1" / "1-1";
  fs::create_directories(usb / "1-1:1.0" / "ttyUSB0");
  std::ofstream(usb / "idVendor") << "0403\n";
  std::ofstream(usb / "idProduct") << "6001\n";
  fs::create_directories(sys / "class" / "tty" / "ttyUSB0");
  fs::create_directory_symlink(usb / "1-1:1.0", sys / "class" / "tty" / "ttyUSB0" / "device");
  // A board's own UART: a device with no USB parent.
  fs::create_directories(sys / "devices" / "platform" / "serial0" / "tty" / "ttyAMA0");
  fs::create_directories(sys / "class" / "tty" / "ttyAMA0");
  fs::create_directory_symlink(sys / "devices" / "platform" / "serial0", sys / "class" / "tty" / "ttyAMA0" / "device");
  // A by-id name, as systemd's rules make it, leading to the node.
  const fs::path dev = directory.path() / "dev";
  fs::create_directories(dev / "serial" / "by-id");
  std::ofstream(dev / "ttyUSB0").put('\0');
  fs::create_symlink(dev / "ttyUSB0", dev / "serial" / "by-id" / "usb-FTDI_FT232R_USB_UART_A6008isP-if00-port0");

  CHECK(bridge::usb_identity("/dev/ttyUSB0", sys) == protocol::UsbIdentity{0x0403, 0x6001});
  CHECK(bridge::usb_identity((dev / "serial" / "by-id" / "usb-FTDI_FT232R_USB_UART_A6008isP-if00-port0").string(),
                             sys) == protocol::UsbIdentity{0x0403, 0x6001});
  CHECK_FALSE(bridge::usb_identity("/dev/ttyAMA0", sys));
  CHECK_FALSE(bridge::usb_identity("/dev/ttyACM7", sys));  // no such tty
  testing::PtyPair pty;
  CHECK_FALSE(bridge::usb_identity(pty.slave));  // the machine's own sysfs: a pseudo-terminal is on no USB
}

TEST_CASE("serial candidates: each device once, by its most lasting name, the board's UARTs only when asked for") {
  namespace fs = std::filesystem;
  testing::TempDir directory;
  const fs::path dev = directory.path() / "dev";
  fs::create_directories(dev / "serial" / "by-id");
  for (const char* node : {"ttyACM0", "ttyUSB0", "ttyUSB1", "ttyS0", "ttyAMA0", "tty1", "null"}) {
    std::ofstream(dev / node).put('\0');
  }
  fs::create_symlink("ttyACM0", dev / "flockbot");  // the package's udev name for the Uno
  fs::create_symlink("../../ttyUSB0", dev / "serial" / "by-id" / "usb-FTDI_FT232R_USB_UART_A6008isP-if00-port0");
  fs::create_symlink("../../ttyACM0", dev / "serial" / "by-id" / "usb-Arduino__www.arduino.cc__0043_7573-if00");

  const auto names = [&](const std::vector<std::string>& paths) {
    std::vector<std::string> relative;
    relative.reserve(paths.size());
    for (const std::string& path : paths) relative.push_back(fs::path(path).lexically_relative(dev).string());
    return relative;
  };
  // The families' udev names (one is there; the node ttyS0 is no udev name), then serial.search's patterns.
  const std::vector<fs::path> named{dev / "flockbot", dev / "pioneer", dev / "ttyS0"};
  const auto patterns = [&](const std::string& text) {
    std::vector<std::string> in_dev;
    for (const std::string& pattern : bridge::search_patterns(text)) in_dev.push_back((dev / pattern).string());
    return in_dev;
  };
  CHECK(bridge::search_patterns(" /dev/serial/by-id/*, /dev/ttyACM*\t/dev/ttyUSB* ") ==
        std::vector<std::string>{"/dev/serial/by-id/*", "/dev/ttyACM*", "/dev/ttyUSB*"});
  const bridge::CandidateScan usb{.named = named, .patterns = patterns("serial/by-id/* ttyACM* ttyUSB*")};
  CHECK(names(bridge::serial_candidates(usb)) ==
        std::vector<std::string>{"flockbot", "serial/by-id/usb-FTDI_FT232R_USB_UART_A6008isP-if00-port0", "ttyUSB1"});
  const bridge::CandidateScan with_uarts{.named = named,
                                         .patterns = patterns("serial/by-id/* ttyACM* ttyUSB* ttyAMA* ttyS*")};
  CHECK(names(bridge::serial_candidates(with_uarts)) ==
        std::vector<std::string>{"flockbot", "serial/by-id/usb-FTDI_FT232R_USB_UART_A6008isP-if00-port0", "ttyUSB1",
                                 "ttyAMA0", "ttyS0"});
  CHECK(bridge::serial_candidates({.patterns = {(directory.path() / "nothing" / "tty*").string()}}).empty());

  // The folders a device appears in, and the entries there that concern the search.
  CHECK(bridge::candidate_folders(usb) == std::vector<fs::path>{dev, dev / "serial" / "by-id"});
  fs::remove_all(dev / "serial");  // before the first USB serial adapter: no /dev/serial yet
  CHECK(bridge::candidate_folders(usb) == std::vector<fs::path>{dev});
  CHECK(bridge::concerns_scan(usb, dev, "ttyUSB3"));
  CHECK(bridge::concerns_scan(usb, dev, "flockbot"));
  CHECK(bridge::concerns_scan(usb, dev, "serial"));  // on the way to /dev/serial/by-id
  CHECK(bridge::concerns_scan(usb, dev / "serial", "by-id"));
  CHECK(bridge::concerns_scan(usb, dev / "serial" / "by-id", "usb-Prolific_Technology_Inc.-if00-port0"));
  CHECK_FALSE(bridge::concerns_scan(usb, dev, "ttyS1"));
  CHECK_FALSE(bridge::concerns_scan(usb, dev, "tty1"));
  CHECK_FALSE(bridge::concerns_scan(usb, dev, "serialize"));
}

TEST_CASE("device watch: a device appearing or going is told once it has settled, other entries are not") {
  namespace fs = std::filesystem;
  testing::TempDir directory;
  const fs::path dev = directory.path() / "dev";
  fs::create_directories(dev);
  const bridge::CandidateScan scan{.patterns = {(dev / "ttyUSB*").string(), (dev / "serial/by-id/*").string()}};
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  int told = 0;
  {
    bridge::DeviceWatch watch(
        &loop, [&](const fs::path& folder, std::string_view name) { return bridge::concerns_scan(scan, folder, name); },
        [&] { ++told; });
    REQUIRE(watch.watch(bridge::candidate_folders(scan)));
    // An adapter: its node, then udev's by-id folder and name, in one burst.
    std::ofstream(dev / "ttyUSB0").put('\0');
    fs::create_directories(dev / "serial");
    CHECK(testing::run_until(
        &loop, [&] { return told == 1; }, 5s));
    REQUIRE(watch.watch(bridge::candidate_folders(scan)));  // by-id has come: watched now
    fs::create_directories(dev / "serial" / "by-id");
    CHECK(testing::run_until(
        &loop, [&] { return told == 2; }, 5s));
    REQUIRE(watch.watch(bridge::candidate_folders(scan)));
    fs::create_symlink("../../ttyUSB0", dev / "serial" / "by-id" / "usb-FTDI-if00-port0");
    CHECK(testing::run_until(
        &loop, [&] { return told == 3; }, 5s));
    // What is no device of the search's is not told; the next device is.
    std::ofstream(dev / "tty1").put('\0');
    std::ofstream(dev / "ttyUSB0") << "written";  // a write to a device wakes nothing
    CHECK_FALSE(testing::run_until(
        &loop, [&] { return told > 3; }, 4 * bridge::DeviceWatch::kSettle));
    fs::remove(dev / "ttyUSB0");
    CHECK(testing::run_until(
        &loop, [&] { return told == 4; }, 5s));
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}
