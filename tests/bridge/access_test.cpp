// The comparison of secrets and the growing delay after wrong ones.
#include <doctest/doctest.h>

#include <chrono>

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

TEST_CASE("wrong secrets make their address wait longer each time, a right one clears it, nobody is banned") {
  LoginGuard guard(
      {.first_delay = milliseconds(500), .longest = milliseconds(4000), .forget_after = milliseconds(60000)});
  const auto start = SteadyTime{} + std::chrono::hours(1);
  CHECK_FALSE(guard.wait("10.0.0.5", start));
  CHECK(guard.failed("10.0.0.5", start) == milliseconds(500));
  CHECK(guard.wait("10.0.0.5", start) == milliseconds(500));
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
  LoginGuard guard({.most_addresses = 3});
  const auto start = SteadyTime{} + std::chrono::hours(1);
  for (int i = 0; i < 5; ++i) (void)guard.failed("10.0.0." + std::to_string(i), start + milliseconds(i));
  CHECK(guard.addresses() == 3);
  CHECK_FALSE(guard.wait("10.0.0.0", start + milliseconds(10)));
  CHECK(guard.wait("10.0.0.4", start + milliseconds(10)));
}
