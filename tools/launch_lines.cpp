// `actormesh launch`: cutting a child's output into prefixed lines.
#include "tools/launch_lines.hpp"

#include <ostream>

namespace am::tools {

line_prefixer::line_prefixer(int index, std::ostream* console, std::ostream* log)
    : prefix_("[" + std::to_string(index) + "] "), console_(console), log_(log) {}

void line_prefixer::feed(std::string_view data) {
  while (!data.empty()) {
    const auto newline = data.find('\n');
    const auto room = max_line - pending_.size();
    if (newline == std::string_view::npos && data.size() < room) {
      pending_.append(data);
      return;
    }
    // A complete line, or a piece that fills the line to max_line.
    const auto take = newline != std::string_view::npos && newline < room ? newline : room;
    pending_.append(data.substr(0, take));
    write_line(pending_);
    pending_.clear();
    data.remove_prefix(take == newline ? take + 1 : take);
  }
}

void line_prefixer::finish() {
  if (!pending_.empty())
    write_line(pending_);
  pending_.clear();
}

void line_prefixer::write_line(std::string_view line) {
  if (console_) {
    console_->write(prefix_.data(), static_cast<std::streamsize>(prefix_.size()));
    console_->write(line.data(), static_cast<std::streamsize>(line.size()));
    console_->put('\n');
  }
  if (log_) {
    log_->write(line.data(), static_cast<std::streamsize>(line.size()));
    log_->put('\n');
  }
}

} // namespace am::tools
