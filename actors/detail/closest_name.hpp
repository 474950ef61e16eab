#pragma once
// The known name nearest to a misspelt one, for "did you mean ...?" in refusals of unknown names.

#include <string>
#include <vector>

namespace am::detail {

/// The number of single-character insertions, deletions and substitutions that turn `a` into `b`
/// (Levenshtein's distance).
std::size_t edit_distance(const std::string& a, const std::string& b);

/// The name of `known` nearest to `word` by edit_distance (the first of equals), or "" when none is
/// within a third of the longer of the two lengths (plus one): far names suggest nothing useful.
std::string closest_name(const std::string& word, const std::vector<std::string>& known);

} // namespace am::detail
