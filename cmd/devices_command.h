// `autoshard devices [NAME]`: the built-in device profiles, and one of them
// as a text-proto to start a custom --device file from.
#ifndef AUTOSHARD_CMD_DEVICES_COMMAND_H_
#define AUTOSHARD_CMD_DEVICES_COMMAND_H_

#include <string>

#include "CLI/CLI.hpp"

namespace autoshard::cmd {

struct DevicesOptions {
  std::string name;  // a built-in profile to print; empty: list them
};

CLI::App* SetupDevices(CLI::App& app, DevicesOptions* options);
// Exit 0, or 2 for a name that is not a built-in profile.
int RunDevices(const DevicesOptions& options);

}  // namespace autoshard::cmd

#endif  // AUTOSHARD_CMD_DEVICES_COMMAND_H_
