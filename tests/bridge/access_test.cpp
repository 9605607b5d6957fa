// The comparison of secrets, the growing delay after wrong ones, and the
// Origin check of the dashboard's WebSocket.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "flockbridge/bridge/access.hpp"

using namespace flockbridge::bridge;
using std::chrono::milliseconds;

TEST_CASE("secrets are equal only when every byte and the length are") {
  CHECK(same_secret("4711", "4711"));
  CHECK_FALSE(same_secret("4712", "4711"));
  CHECK_FALSE(same_secret("471", "4711"));
  CHECK_FALSE(same_secret("47114711", "4711"));  // a repetition is not the secret
  CHECK_FALSE(same_secret("", "4711"));
  CHECK_FALSE(same_secret("", ""));  // no secret set: nothing matches it
}

TEST_CASE("a mistyped secret or two cost nothing, so a quick retry is taken") {
  LoginGuard guard;  // the bridge's own settings
  const auto start = SteadyTime{} + std::chrono::hours(1);
  for (int i = 0; i < 3; ++i) {
    CHECK(guard.failed("10.0.0.5", start + milliseconds(i)) == milliseconds(0));
    CHECK_FALSE(guard.wait("10.0.0.5", start + milliseconds(i)));
  }
  // Then it grows: a second, two, four, ... at most 30 s.
  CHECK(guard.failed("10.0.0.5", start + milliseconds(10)) == milliseconds(1000));
  CHECK(guard.wait("10.0.0.5", start + milliseconds(10))->left == milliseconds(1000));
  CHECK(guard.failed("10.0.0.5", start + milliseconds(1010)) == milliseconds(2000));
  guard.succeeded("10.0.0.5");
  CHECK(guard.failed("10.0.0.5", start + milliseconds(5000)) == milliseconds(0));
}

TEST_CASE("wrong secrets make their address wait longer each time, a right one clears it, nobody is banned") {
  LoginGuard guard({.free_tries = 0,
                    .first_delay = milliseconds(500),
                    .longest = milliseconds(4000),
                    .forget_after = milliseconds(60000)});
  const auto start = SteadyTime{} + std::chrono::hours(1);
  CHECK_FALSE(guard.wait("10.0.0.5", start));
  CHECK(guard.failed("10.0.0.5", start) == milliseconds(500));
  CHECK(guard.wait("10.0.0.5", start)->left == milliseconds(500));
  CHECK_FALSE(guard.wait("10.0.0.6", start));  // other addresses are not held up
  CHECK_FALSE(guard.wait("10.0.0.5", start + milliseconds(500)));
  CHECK(guard.failed("10.0.0.5", start + milliseconds(500)) == milliseconds(1000));
  CHECK(guard.failed("10.0.0.5", start + milliseconds(1500)) == milliseconds(2000));
  CHECK(guard.failed("10.0.0.5", start + milliseconds(3500)) == milliseconds(4000));
  CHECK(guard.failed("10.0.0.5", start + milliseconds(7500)) == milliseconds(4000));  // at most `longest`
  guard.succeeded("10.0.0.5");
  CHECK_FALSE(guard.wait("10.0.0.5", start + milliseconds(7500)));
  CHECK(guard.failed("10.0.0.5", start + milliseconds(7500)) == milliseconds(500));
  // Left alone long enough, an address is forgotten.
  CHECK(guard.addresses() == 1);
  CHECK_FALSE(guard.wait("10.0.0.5", start + milliseconds(67500)));
  CHECK(guard.addresses() == 0);
}

TEST_CASE("the guard remembers a bounded number of addresses, forgetting the oldest first") {
  LoginGuard guard({.free_tries = 0, .most_addresses = 3});
  const auto start = SteadyTime{} + std::chrono::hours(1);
  for (int i = 0; i < 5; ++i) (void)guard.failed("10.0.0." + std::to_string(i), start + milliseconds(i));
  CHECK(guard.addresses() == 3);
  CHECK_FALSE(guard.wait("10.0.0.0", start + milliseconds(10)));
  CHECK(guard.wait("10.0.0.4", start + milliseconds(10)));
}

TEST_CASE("wrong PINs from many addresses draw on one budget for everyone: a first few, then one an interval") {
  LoginGuard guard({.shared_burst = 20, .shared_interval = milliseconds(6000)});
  const auto start = SteadyTime{} + std::chrono::hours(1);
  // A classmate with an address for every guess: each is a first wrong try
  // of its address, which costs that address nothing.
  int taken = 0;
  auto at = start;
  for (int i = 0; i < 2000; ++i, at += milliseconds(1)) {
    const std::string address = "127.0." + std::to_string(i / 250) + "." + std::to_string(i % 250);
    if (guard.wait(address, at)) continue;
    ++taken;
    (void)guard.failed(address, at);
  }
  CHECK(taken == 20);
  // Then one every 6 s, whoever tries: 10 a minute.
  const auto wait = guard.wait("10.9.9.9", at);
  REQUIRE(wait);
  CHECK(wait->everyone);
  CHECK(wait->left <= milliseconds(6000));
  taken = 0;
  for (int second = 0; second < 600; ++second) {  // ten minutes
    const auto now = at + std::chrono::seconds(second);
    const std::string address = "fd00::" + std::to_string(second);
    if (guard.wait(address, now)) continue;
    ++taken;
    (void)guard.failed(address, now);
  }
  CHECK(taken >= 99);
  CHECK(taken <= 101);
  // Left alone, the budget fills again, up to its first few.
  CHECK_FALSE(guard.wait("10.9.9.9", at + std::chrono::minutes(30)));
}

TEST_CASE("an Origin header is read down to its host") {
  CHECK(origin_host("http://Flockbot7.local:8080") == "flockbot7.local");
  CHECK(origin_host("https://10.0.3.17") == "10.0.3.17");
  CHECK(origin_host("http://[::1]:8080") == "::1");
  CHECK(origin_host("http://10.0.3.17:8080/") == "10.0.3.17");
  CHECK_FALSE(origin_host("null"));  // a sandboxed page or a file
  CHECK_FALSE(origin_host("flockbot7.local"));
  CHECK_FALSE(origin_host("http://user@evil.example"));
  CHECK_FALSE(origin_host("http://evil.example/path"));
  CHECK_FALSE(origin_host("http://[::1"));
  CHECK_FALSE(origin_host("http://"));
  CHECK(host_list(" Dash.School.lan, https://robots.school.lan:8443 ,,10.0.0.5:80") ==
        std::vector<std::string>{"dash.school.lan", "robots.school.lan", "10.0.0.5"});
  CHECK(host_list("").empty());
}

TEST_CASE("a page may open the WebSocket from the robot's own names or the allowed ones, and a program always may") {
  const std::vector<std::string> own{"localhost", "flockbot7", "flockbot7.local", "10.0.3.17", "fe80::1"};
  const std::vector<std::string> allowed{"dash.school.lan"};
  CHECK(origin_allowed(std::nullopt, own, allowed));  // no Origin: not a browser
  CHECK(origin_allowed("http://flockbot7.local:8080", own, allowed));
  CHECK(origin_allowed("http://10.0.3.17:8080", own, allowed));
  CHECK(origin_allowed("http://[fe80::1]:8080", own, allowed));
  CHECK(origin_allowed("https://dash.school.lan", own, allowed));
  CHECK_FALSE(origin_allowed("http://evil.example", own, allowed));
  CHECK_FALSE(origin_allowed("http://flockbot7.local.evil.example", own, allowed));
  CHECK_FALSE(origin_allowed("null", own, allowed));
  CHECK_FALSE(origin_allowed("", own, allowed));
}
