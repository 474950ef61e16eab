/// Text pictures of how an array is laid out over devices (`jax.debug.visualize_array_sharding`).
///
/// The drawing matches JAX's character for character: each cell is sized from the block's share of
/// the array, labelled with the platform and the sorted ids of the devices holding it, and the table
/// fits 80 columns. Plain, it is rich's square-box table (JAX without a colour console); with
/// `use_color` it is JAX's picture on a truecolor terminal: no borders, each cell on a background
/// of matplotlib's tab20b colours with black or white text, as escape sequences. Where JAX's cells
/// overflow 80 columns rich drops the labels; we shrink the columns the same way but keep the
/// labels (centred).
#ifndef ACTORMESH_SHARDING_VISUALIZE_HPP
#define ACTORMESH_SHARDING_VISUALIZE_HPP

#include "actormesh/sharding/sharding.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace am {

/// How to draw the picture.
struct visualize_options {
  /// Platform shown in each label; empty means the devices' own (`CPU`, `GPU`). The seed's pictures
  /// say `TPU`.
  std::string platform{};
  /// Relabels device ids: device `i` is shown as `device_ids[i]` when `i < device_ids.size()` (a
  /// device-order permutation, e.g. {0,1,2,3,6,7,4,5} for the seed's TPU pictures).
  std::vector<int> device_ids{};
  /// JAX's `scale`: the base cell height is int(10 * scale).
  double scale = 1.0;
  /// Narrowest cell, borders included (JAX's `min_width`).
  int min_width = 9;
  /// Widest cell and width of the console (JAX's `max_width`).
  int max_width = 80;
  /// The most blocks drawn: past about 40 columns the cells narrow to nothing in 80 columns, and a
  /// mesh of a million devices would draw tens of megabytes; more blocks raise am::value_error.
  std::int64_t max_blocks = 1024;
  /// End with an empty line after the bottom border. Off by default: JAX passes end='\n\n' to rich,
  /// which a table ignores, so JAX's picture ends with the border's newline (REFERENCE.md).
  bool trailing_empty_line = false;
  /// Colour the cells as JAX does on a colour terminal (truecolor escape sequences, no borders).
  /// Off by default, since a string goes anywhere: set it to stdout_has_colour() when printing.
  bool use_color = false;
};

/// Whether standard output is a terminal that shows colours: a tty, TERM set and not "dumb", and no
/// NO_COLOR in the environment (no-color.org). Piped or redirected output is plain.
bool stdout_has_colour();

/// The picture of arrays of `shape` (rank 1 or 2) under `s`; every line ends in '\n'. Throws
/// am::value_error ("`visualize_sharding` only works for shapes with 1 and 2 dimensions.") for other
/// ranks, for more than `options.max_blocks` blocks, and the sharding's own errors for shapes it
/// cannot take.
std::string visualize_sharding(const std::vector<std::int64_t>& shape, const sharding& s,
                               const visualize_options& options = {});

/// Same as visualize_sharding: the name JAX gives the function taking an array.
std::string visualize_array_sharding(const std::vector<std::int64_t>& shape, const sharding& s,
                                     const visualize_options& options = {});

} // namespace am

#endif // ACTORMESH_SHARDING_VISUALIZE_HPP
