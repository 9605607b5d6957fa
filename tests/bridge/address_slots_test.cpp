// Connections per computer: what counts as one computer, and its share.
#include <doctest/doctest.h>

#include "flockbridge/bridge/address_slots.hpp"

using namespace flockbridge::bridge;

TEST_CASE("a computer is an IPv4 address or an IPv6 /64, and localhost is none") {
  CHECK(AddressSlots::computer_of("10.0.3.17") == "10.0.3.17");
  CHECK(AddressSlots::computer_of("127.0.3.17") == "127.0.3.17");
  CHECK(AddressSlots::computer_of("[2001:db8:1:2:aaaa:bbbb:cccc:dddd]") == "2001:db8:1:2::/64");
  CHECK(AddressSlots::computer_of("2001:db8:1:2::5") == "2001:db8:1:2::/64");
  CHECK(AddressSlots::computer_of("fe80::1%wlan0") == "fe80::/64");
  CHECK(AddressSlots::computer_of("::ffff:10.0.3.17") == "10.0.3.17");
  CHECK_FALSE(AddressSlots::computer_of("127.0.0.1"));
  CHECK_FALSE(AddressSlots::computer_of("[::1]"));
  CHECK_FALSE(AddressSlots::computer_of("::ffff:127.0.0.1"));
  CHECK_FALSE(AddressSlots::computer_of("unknown peer"));
}

TEST_CASE("each computer has its share of slots, given back as its connections close") {
  AddressSlots slots(3);
  for (int i = 0; i < 3; ++i) CHECK(slots.take("10.0.3.17"));
  CHECK_FALSE(slots.take("10.0.3.17"));
  CHECK(slots.take("10.0.3.18"));  // another computer
  CHECK(slots.held("10.0.3.17") == 3);
  slots.give_back("10.0.3.17");
  CHECK(slots.take("10.0.3.17"));
  for (int i = 0; i < 4; ++i) slots.give_back("10.0.3.17");
  CHECK(slots.held("10.0.3.17") == 0);  // never below nothing
  slots.give_back("10.0.9.9");          // never taken: nothing happens
  CHECK(slots.held("10.0.9.9") == 0);
}
