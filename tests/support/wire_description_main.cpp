// Prints protocol/methods.hpp's table with the fields of every params and result type, as JSON
// (rpc::methods_description): what client/pi/test/wire-description.test.ts compares the
// TypeScript table against.
#include <iostream>

#include "protocol/methods.hpp"

int main() {
  std::cout << handoff::rpc::methods_description().dump(2) << '\n';
  return 0;
}
