// The random-number peers' loops for the baseline x86-64 (reference_random.inc).
#define AM_REFERENCE_ISA scalar
#include "reference_random.inc"
