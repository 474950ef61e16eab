// The random-number peers' loops for AVX512 (reference_random.inc).
#define AM_REFERENCE_ISA avx512
#include "reference_random.inc"
