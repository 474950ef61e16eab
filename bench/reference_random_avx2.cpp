// The random-number peers' loops for AVX2 (reference_random.inc).
#define AM_REFERENCE_ISA avx2
#include "reference_random.inc"
