// "Did you mean": the nearest name to a mistyped one, and none when nothing is near.
#include <doctest/doctest.h>

#include <array>
#include <string_view>

#include "flockbridge/bridge/suggest.hpp"

using namespace flockbridge::bridge;

TEST_CASE("a mistyped name gets the nearest one suggested, an unrelated one none") {
  CHECK(edit_distance("simulate", "simulate") == 0);
  CHECK(edit_distance("simulte", "simulate") == 1);   // one letter left out
  CHECK(edit_distance("simualte", "simulate") == 1);  // two letters swapped
  CHECK(edit_distance("ROBOT", "robot") == 0);        // case is no difference
  constexpr std::array<std::string_view, 6> kOptions{"--simulate", "--robot", "--robot-name",
                                                     "--device",   "--port",  "--json-port"};
  CHECK(nearest("--simulte", kOptions) == "--simulate");
  CHECK(nearest("--robt", kOptions) == "--robot");
  CHECK(nearest("--devcie", kOptions) == "--device");
  CHECK(nearest("--jsonport", kOptions) == "--json-port");
  CHECK(nearest("--robot-nam", kOptions) == "--robot-name");  // begun and not finished
  CHECK_FALSE(nearest("--colour", kOptions));
  constexpr std::array<std::string_view, 4> kFamilies{"flockbot", "pioneer", "smr", "none"};
  CHECK(nearest("smrr", kFamilies) == "smr");
  CHECK(nearest("pionner", kFamilies) == "pioneer");
  CHECK(did_you_mean("flokbot", kFamilies) == " (did you mean 'flockbot'?)");
  CHECK(did_you_mean("rover", kFamilies).empty());
}
