/*
 * IEEE-754 binary16 (half) <-> float on the host, so the C harness can feed
 * the tensor-core steps without C++ or cuda_fp16.h. Round to nearest even,
 * the rounding the GPU's own conversions use.
 */
#ifndef HALF_H
#define HALF_H

#include <stdint.h>

uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

#endif
