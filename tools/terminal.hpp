/// The terminal behind a standard stream: whether there is one, and its size. Part of am_progress
/// (the progress display fits its width; `actormesh info --watch` clips its frames to its height).
#pragma once

#include <iosfwd>

namespace am::tools {

/// True when `out` is std::cout and standard output is a terminal, or std::cerr (std::clog) and
/// standard error is one.
bool is_terminal(const std::ostream& out);

/// The width in columns of the terminal behind `out` (as is_terminal finds it), else COLUMNS when
/// set, else 80.
int terminal_columns(const std::ostream& out);

/// The height in rows of the terminal behind `out`, else LINES when set, else 24.
int terminal_rows(const std::ostream& out);

} // namespace am::tools
