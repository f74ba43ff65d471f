/*
 * FP8 e4m3 (the OCP "E4M3FN" kind the tensor cores read: 1 sign, 4
 * exponent bits biased by 7, 3 mantissa bits, no infinity, 0x7f and 0xff
 * NaN, largest finite 448) <-> float on the host, and the quantizer that
 * makes the FP8 step's inputs: each block of values shares one float scale.
 * Round to nearest even and saturate to +-448, as the GPU's cvt.rn.satfinite
 * does.
 */
#ifndef FP8_H
#define FP8_H

#include <stddef.h>
#include <stdint.h>

#define E4M3_MAX 448.0f

uint8_t float_to_e4m3(float f);
float e4m3_to_float(uint8_t q);

/* Quantizes a rows x cols row-major matrix x in blocks of block_rows rows by
 * 128 columns (the last ones smaller where rows or cols end): each block's
 * scale is its largest |x| / E4M3_MAX (1 for a block of zeros); q holds
 * e4m3(x / scale). So the block's largest |x| becomes 448 and x is about q *
 * scale. The scales, ceil(rows / block_rows) x ceil(cols / 128), are stored
 * row by row, or with by_column column by column (a column's scales
 * together). As gemm.h's FP8 call takes them: A (activations) in blocks of 1
 * row, by column; B (weights, N x K) in blocks of 128 rows, by row. */
void quantize_blocks(const float *x, int rows, int cols, int block_rows, int by_column, uint8_t *q,
                     float *scales);

#endif
