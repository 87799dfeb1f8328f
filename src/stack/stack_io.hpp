// Stack profiles: read a text-format StackProfile (proto/stack.proto), check it, and turn it into the collectives'
// plain StackProfile and algorithm rules. Shipped profiles live in stacks/ and are chosen by name.
#pragma once

#include "collectives/algorithm_spec.hpp"
#include "collectives/options.hpp"
#include "proto/stack.pb.h"

#include <optional>
#include <string>
#include <vector>

namespace ddlsim::stack {

/** @brief A checked profile: its mechanisms, and the library's algorithm selection when it has one. */
struct Stack {
  collectives::StackProfile profile;
  std::optional<collectives::AlgorithmSpec> algorithm; ///< the profile's rules; none: the user's --algorithm
};

/** @brief The folder of the shipped profiles (the source tree's stacks/, fixed at build time). */
std::string stacks_dir();

/** @brief The names of the shipped profiles ("grpc-tcp, ideal, ..."), for help and errors. */
std::vector<std::string> shipped_stacks();

/** @brief `ideal` (built in), a shipped name (stacks/NAME.textproto) or a file path (contains '/' or ends in
 *  .textproto). Throws InputError naming the file, the field and the value. */
Stack load_stack(const std::string& name_or_file);

/** @brief Parses and checks profile text; `source` names it in errors. Throws InputError. */
Stack parse_stack(const std::string& text, const std::string& source);

} // namespace ddlsim::stack
