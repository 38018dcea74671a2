// Internal to writers/: the pieces both HTML pages are made of (the
// page frame with its CSS and script, tagged figures, tables, the memory
// charts). See html_report.h for what the pages show.
#ifndef AUTOSHARD_WRITERS_HTML_PAGE_H_
#define AUTOSHARD_WRITERS_HTML_PAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/device.pb.h"
#include "proto/plan.pb.h"

namespace autoshard::html {

// The whole page: <!DOCTYPE html>, <head> with `title` and the inline CSS,
// <body> with `body`, then the inline script (sortable tables; it sets
// data-ready="yes" on <html> when it has run, which tests look for).
std::string Page(absl::string_view title, absl::string_view body);

// <span data-field="PATH" data-value="V">TEXT</span>: a figure of the plan,
// V exact (integers as integers, doubles with 17 significant digits).
std::string Figure(absl::string_view path, int64_t value,
                   absl::string_view text);
std::string Figure(absl::string_view path, double value,
                   absl::string_view text);
// Byte, FLOPs and seconds figures formatted as the text report does.
std::string Bytes(absl::string_view path, int64_t bytes);
std::string Flops(absl::string_view path, double flops);
std::string Seconds(absl::string_view path, double seconds);

// An HTML table; cells are HTML (escape text with XmlEscape). A table with
// class "sortable" sorts by a column when its header is clicked.
std::string Table(absl::string_view id, const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows);

// <section id=ID><h2>TITLE</h2>CONTENT</section>.
std::string Section(absl::string_view id, absl::string_view title,
                    absl::string_view content);

// Memory kinds in the tile-memory model's order, and their colours.
inline constexpr const char* kMemoryKinds[] = {
    "weights", "code", "exchange", "live activations", "temporaries"};
inline constexpr const char* kMemoryColours[] = {
    "#2b5c8a", "#a0522d", "#c0392b", "#16a2b8", "#8e9e1f"};

// One row per `memory` (labels[i] names it): memory by kind against one
// IPU's capacity (device.tiles_per_ipu x bytes_per_tile). When the largest
// total is under a tenth of the capacity, the axis ends at 1.1 x that total
// and the title says the capacity is off the scale.
std::string MemoryChart(const std::vector<proto::IpuMemory>& memory,
                        const std::vector<std::string>& labels,
                        const proto::DeviceProfile& device);

// One row per `memory`: its fullest tile against bytes_per_tile, each row's
// note the tile, its bytes and the margin (free bytes, % of the tile).
std::string TileChart(const std::vector<proto::IpuMemory>& memory,
                      const std::vector<std::string>& labels,
                      const proto::DeviceProfile& device);

// The "memory" section: MemoryChart and TileChart of `memory`, then `extra`
// (HTML).
std::string MemorySection(absl::string_view title,
                          const std::vector<proto::IpuMemory>& memory,
                          const std::vector<std::string>& labels,
                          const proto::DeviceProfile& device,
                          absl::string_view extra = "");

// The "options" section: `rows` (option, HTML value), then the device's
// figures the charts use and, when not empty, the command line.
std::string OptionsSection(std::vector<std::vector<std::string>> rows,
                           const proto::DeviceProfile& device,
                           absl::string_view command_line);

// The "warnings" section: a list, or "none".
std::string WarningSection(
    const google::protobuf::RepeatedPtrField<std::string>& warnings);

}  // namespace autoshard::html

#endif  // AUTOSHARD_WRITERS_HTML_PAGE_H_
