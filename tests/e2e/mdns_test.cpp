// The robot announced on the network (mdns.service_file): the bridge fills
// in the Avahi service file at start with its name, family, model and
// ports. Here a file of the test's own; the package test checks that the
// real avahi-daemon announces what the installed service wrote.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "e2e/rig.hpp"

namespace flockbridge::testing {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("mdns: the Avahi service file is filled in with the robot's name, family, model and ports") {
  TempDir folder;
  const auto file = folder / "flockbridge.service";
  std::ofstream(file) << "the package's template\n";
  RigOptions options = smr_rig();
  options.bridge_args = {"--robot-name", "smr-7", "--mdns-service-file", file.string()};
  Rig rig(options);
  REQUIRE(rig.bridge().wait_seen(ChildProcess::Stream::Stderr, "mDNS: announced as \"smr-7 (smr)\""));
  const std::string xml = read_file(file);
  CHECK(xml.find("the package's template") == std::string::npos);
  CHECK(xml.find("<name>smr-7 (smr)</name>") != std::string::npos);
  const std::string json = std::to_string(rig.json_port());
  const std::string http = std::to_string(rig.http_port());
  CHECK(xml.find("<type>_flockbridge._tcp</type>\n    <port>" + json + "</port>") != std::string::npos);
  for (const std::string& txt :
       std::vector<std::string>{"txtvers=1", "robot=smr-7", "family=smr", "model=smr", "json=" + json, "http=" + http,
                                "native=" + std::to_string(rig.port())}) {
    CAPTURE(txt);
    CHECK(xml.find("<txt-record>" + txt + "</txt-record>") != std::string::npos);
  }
  CHECK(xml.find("hub=1") == std::string::npos);
  CHECK(xml.find("<type>_http._tcp</type>\n    <port>" + http + "</port>\n    <txt-record>path=/</txt-record>") !=
        std::string::npos);
}

TEST_CASE("mdns: nothing is written where there is no service file, and a file it cannot write is told") {
  TempDir folder;
  SUBCASE("no file: the package is not installed") {
    RigOptions options;
    options.bridge_args = {"--mdns-service-file", (folder / "missing.service").string()};
    Rig rig(options);
    auto client = rig.json_client();  // up, and it created nothing
    CHECK_FALSE(std::filesystem::exists(folder / "missing.service"));
    CHECK_FALSE(rig.bridge().seen(ChildProcess::Stream::Stderr, "mDNS: announced"));
  }
  SUBCASE("a file it may not write") {
    RigOptions options;
    options.bridge_args = {"--mdns-service-file", folder.path().string()};  // a folder: cannot be written
    Rig rig(options);
    CHECK(rig.bridge().wait_seen(ChildProcess::Stream::Stderr,
                                 "mDNS: the robot is not announced on the network: "
                                 "cannot write " +
                                     folder.path().string()));
  }
}

}  // namespace flockbridge::testing
