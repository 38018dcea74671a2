#include "cmd/devices_command.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cmd/commands.h"
#include "cmd/help.h"
#include "costmodel/device_profile.h"
#include "google/protobuf/text_format.h"
#include "writers/emit.h"

namespace autoshard::cmd {

CLI::App* SetupDevices(CLI::App& app, DevicesOptions* o) {
  CLI::App* sub = app.add_subcommand(
      "devices",
      "list the built-in device profiles, or print one as a text-proto to "
      "start a custom --device file from");
  sub->footer(
      "Examples:\n"
      "  autoshard devices\n"
      "  autoshard devices ipu2 > my_ipu.textproto   # edit, then:\n"
      "  autoshard shard model.onnx -n 2 --device my_ipu.textproto");
  sub->add_option("name", o->name,
                  "a built-in profile to print (ipu1, ipu2, ipu21, c600)");
  return sub;
}

int RunDevices(const DevicesOptions& o) {
  if (o.name.empty()) {
    static constexpr char row[] = "%-6s %6s %10s %10s %13s  %s\n";
    std::cout << absl::StrFormat(row, "name", "tiles", "tile", "IPU",
                                 "peak FP16", "chip");
    for (const std::string& name : BuiltinDeviceNames()) {
      const absl::StatusOr<proto::DeviceProfile> p = LoadDeviceProfile(name);
      if (!p.ok()) return ReportError(p.status());
      std::cout << absl::StrFormat(
          row, name, absl::StrCat(p->tiles_per_ipu()),
          HumanBytesText(static_cast<double>(p->bytes_per_tile())),
          HumanBytesText(static_cast<double>(p->bytes_per_tile()) *
                         p->tiles_per_ipu()),
          HumanFlopsText(p->peak_fp16_flops_per_s()) + "/s", p->description());
    }
    std::cout << "(default ipu2; 'autoshard devices NAME' prints one as a "
                 "text-proto for --device FILE)\n";
    return kExitOk;
  }
  const std::vector<std::string> names = BuiltinDeviceNames();
  if (std::find(names.begin(), names.end(), o.name) == names.end()) {
    return ReportError(absl::InvalidArgumentError(
        absl::StrCat("'", o.name, "' is not a built-in device (",
                     absl::StrJoin(names, ", "), ")")));
  }
  absl::StatusOr<proto::DeviceProfile> p = LoadDeviceProfile(o.name);
  if (!p.ok()) return ReportError(p.status());
  // An edited copy is no longer what the calibration was fitted to.
  p->set_name(absl::StrCat("custom-", o.name));
  p->clear_calibration();
  std::string text;
  google::protobuf::TextFormat::PrintToString(*p, &text);
  std::cout << "# A DeviceProfile (schema: " << SchemaDir()
            << "/device.proto), copied\n# from the built-in '" << o.name
            << "' without its calibration. Edit it, then pass it as "
               "--device FILE.\n"
            << text;
  return kExitOk;
}

}  // namespace autoshard::cmd
