#include "actors/detail/closest_name.hpp"

#include <algorithm>
#include <numeric>

namespace am::detail {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // One row of the dynamic-programming table at a time: row[j] is the distance between the first
  // i characters of a and the first j of b.
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_name(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = 0;
  for (const auto& name : known) {
    const auto d = edit_distance(word, name);
    if (d <= std::max(word.size(), name.size()) / 3 + 1 && (best.empty() || d < best_distance)) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

} // namespace am::detail
