// Golden pictures of visualize_array_sharding shared by tests/unit/test_visualize.cpp and
// tests/unit/test_array_pictures.cpp: what JAX's jax.debug.visualize_array_sharding draws (rich, no
// colour). The TPU ones are the seed's 8192x8192 array on a TPU v3-8, devices in the order
// 0,1,2,3,6,7,4,5 that mesh_utils.create_device_mesh((8,)) gives; they depend only on the ratio of
// the array's dimensions, so they serve any square 2-D array. Each constant ends with the bottom
// border's newline and no empty line after it, as JAX's pictures do (REFERENCE.md).
#pragma once

#include <string>

namespace am::testing::pictures {

/// A picture as visualize_array_sharding returns it: the drawing, ending with the border's newline.
inline std::string as_drawn(const std::string& picture) { return picture; }

/// jax.debug.visualize_array_sharding(x) with x on one TPU (before any device_put)
inline const std::string single_tpu_0 = as_drawn(R"PIC(┌───────────────────────┐
│                       │
│                       │
│                       │
│                       │
│         TPU 0         │
│                       │
│                       │
│                       │
│                       │
└───────────────────────┘
)PIC");

/// sharding.reshape(4, 2) on TPUs, the same as P('a', 'b') on mesh (4, 2) ('a', 'b')
inline const std::string grid_4x2_tpu = as_drawn(R"PIC(┌──────────┬──────────┐
│  TPU 0   │  TPU 1   │
├──────────┼──────────┤
│  TPU 2   │  TPU 3   │
├──────────┼──────────┤
│  TPU 6   │  TPU 7   │
├──────────┼──────────┤
│  TPU 4   │  TPU 5   │
└──────────┴──────────┘
)PIC");

/// sharding.reshape(8, 1) on TPUs, the same as P(('a', 'b'), None) on mesh (4, 2) ('a', 'b')
inline const std::string rows_8_tpu = as_drawn(R"PIC(┌───────────────────────┐
│         TPU 0         │
├───────────────────────┤
│         TPU 1         │
├───────────────────────┤
│         TPU 2         │
├───────────────────────┤
│         TPU 3         │
├───────────────────────┤
│         TPU 6         │
├───────────────────────┤
│         TPU 7         │
├───────────────────────┤
│         TPU 4         │
├───────────────────────┤
│         TPU 5         │
└───────────────────────┘
)PIC");

/// sharding.reshape(1, 8) on TPUs
inline const std::string cols_8_tpu = as_drawn(R"PIC(┌───────┬───────┬───────┬───────┬───────┬───────┬───────┬───────┐
│       │       │       │       │       │       │       │       │
│       │       │       │       │       │       │       │       │
│       │       │       │       │       │       │       │       │
│       │       │       │       │       │       │       │       │
│ TPU 0 │ TPU 1 │ TPU 2 │ TPU 3 │ TPU 6 │ TPU 7 │ TPU 4 │ TPU 5 │
│       │       │       │       │       │       │       │       │
│       │       │       │       │       │       │       │       │
│       │       │       │       │       │       │       │       │
│       │       │       │       │       │       │       │       │
└───────┴───────┴───────┴───────┴───────┴───────┴───────┴───────┘
)PIC");

/// sharding.reshape(4, 2).replicate(0) on TPUs, the same as P(None, 'b') on mesh (4, 2) ('a', 'b')
inline const std::string cols_2_tpu = as_drawn(R"PIC(┌───────────┬───────────┐
│           │           │
│           │           │
│           │           │
│           │           │
│TPU 0,2,4,6│TPU 1,3,5,7│
│           │           │
│           │           │
│           │           │
│           │           │
└───────────┴───────────┘
)PIC");

/// sharding.reshape(4, 2).replicate(1) on TPUs, the same as P('a', None) and P('a') on mesh (4, 2) ('a', 'b')
inline const std::string rows_4_pairs_tpu = as_drawn(R"PIC(┌───────────────────────┐
│        TPU 0,1        │
├───────────────────────┤
│        TPU 2,3        │
├───────────────────────┤
│        TPU 6,7        │
├───────────────────────┤
│        TPU 4,5        │
└───────────────────────┘
)PIC");

/// NamedSharding(mesh, P('b', 'a')) on mesh (4, 2) ('a', 'b') on TPUs
inline const std::string grid_2x4_tpu = as_drawn(R"PIC(┌───────┬───────┬───────┬───────┐
│       │       │       │       │
│ TPU 0 │ TPU 2 │ TPU 6 │ TPU 4 │
│       │       │       │       │
│       │       │       │       │
├───────┼───────┼───────┼───────┤
│       │       │       │       │
│ TPU 1 │ TPU 3 │ TPU 7 │ TPU 5 │
│       │       │       │       │
│       │       │       │       │
└───────┴───────┴───────┴───────┘
)PIC");

/// NamedSharding(mesh, P(None, 'a')) on mesh (4, 2) ('a', 'b') on TPUs
inline const std::string cols_4_pairs_tpu = as_drawn(R"PIC(┌───────┬───────┬───────┬───────┐
│       │       │       │       │
│       │       │       │       │
│       │       │       │       │
│       │       │       │       │
│TPU 0,1│TPU 2,3│TPU 6,7│TPU 4,5│
│       │       │       │       │
│       │       │       │       │
│       │       │       │       │
│       │       │       │       │
└───────┴───────┴───────┴───────┘
)PIC");

/// NamedSharding(mesh, P('x')) of a length-8 array on mesh (8,) ('x') over 8 CPUs
inline const std::string row_8_cpu_1d = as_drawn(R"PIC(┌───────┬───────┬───────┬───────┬───────┬───────┬───────┬───────┐
│ CPU 0 │ CPU 1 │ CPU 2 │ CPU 3 │ CPU 4 │ CPU 5 │ CPU 6 │ CPU 7 │
└───────┴───────┴───────┴───────┴───────┴───────┴───────┴───────┘
)PIC");

} // namespace am::testing::pictures
