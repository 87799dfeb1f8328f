// ddlsim entry point: the only place where errors become exit codes (0 success, 1 bad input file, 2 bad option,
// 3 internal or simulation failure, 4 an output could not be written; README.md, "Exit codes").
#include "cli/cli.hpp"
#include "common/error.hpp"

#include <exception>
#include <iostream>

int main(int argc, char** argv)
{
  try {
    ddlsim::cli::dispatch(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
    return 0;
  } catch (const ddlsim::ConfigError& e) {
    std::cerr << "ddlsim: error: " << e.what() << "\n";
    return 2;
  } catch (const ddlsim::InputError& e) {
    std::cerr << "ddlsim: error: " << e.what() << "\n";
    return 1;
  } catch (const ddlsim::WriteError& e) {
    std::cerr << "ddlsim: error: " << e.what() << "\n";
    return 4;
  } catch (const std::exception& e) { // not ddlsim's: its message may have several lines
    std::cerr << "ddlsim: error: " << ddlsim::one_line(e.what()) << "\n";
    return 3;
  }
}
